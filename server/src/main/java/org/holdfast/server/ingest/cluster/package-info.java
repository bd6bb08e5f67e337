/**
 * The cluster port of master/worker mode on the agent protocol's Netty stack (same frame header,
 * limits and discard-after-violation rules; docs/protocol.md, "Cluster messages"):
 * {@link org.holdfast.server.ingest.cluster.ClusterServer} and its per-connection
 * {@link org.holdfast.server.ingest.cluster.MasterLink} on the master,
 * {@link org.holdfast.server.ingest.cluster.WorkerConnector} on a worker. The membership rules they
 * serve live in {@code org.holdfast.server.cluster}.
 */
package org.holdfast.server.ingest.cluster;
