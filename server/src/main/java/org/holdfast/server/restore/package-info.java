/**
 * Serving snapshots back to agents: {@link org.holdfast.server.restore.SnapshotLister} answers
 * LIST_SNAPSHOTS and {@link org.holdfast.server.restore.SnapshotImage} reads a snapshot as an image.
 * The streaming of one snapshot over the agent port (ingest.RestoreStream) lives in ingest, with
 * the rest of the Netty code.
 */
package org.holdfast.server.restore;
