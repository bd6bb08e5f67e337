package org.holdfast.server.catalog;

/** A snapshot commit as a {@link CommitHook} sees it: the volume after the commit, the new snapshot and its delta. */
public record CommittedSnapshot(VolumeRecord volume, SnapshotRecord snapshot, SnapshotDelta delta) {
}
