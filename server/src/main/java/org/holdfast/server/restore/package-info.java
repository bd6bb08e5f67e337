/**
 * Serving snapshots back to agents: {@link org.holdfast.server.restore.RestoreStream} streams one
 * snapshot in LBN order from one ordered scan of the versioned map, passing stored bytes through
 * unchanged, at the pace the connection can take; {@link org.holdfast.server.restore.SnapshotLister}
 * answers LIST_SNAPSHOTS.
 */
package org.holdfast.server.restore;
