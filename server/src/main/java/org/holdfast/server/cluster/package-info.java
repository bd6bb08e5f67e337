/**
 * Membership of master/worker mode (docs/architecture.md, "Cluster membership"), free of Netty and
 * Spring. A <em>worker</em> is a node (named by its node name) that registered with the master; the
 * master's {@link org.holdfast.server.cluster.WorkerRegistry} gives it a stable <em>worker id</em>, a
 * disjoint <em>PBN range</em> it will own, and an <em>epoch</em> that grows on every registration of
 * the node, so that messages of an older connection can be told from the current one. A member is
 * <em>up</em>, <em>late</em> (heartbeats missed) or <em>lost</em> (connection gone or silent too long).
 * The transport lives in {@code ingest.cluster}, the persistence in {@code catalog.ClusterStore}.
 */
package org.holdfast.server.cluster;
