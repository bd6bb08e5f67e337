package org.holdfast.server.catalog;

import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;

/**
 * One committed snapshot. {@code logicalBytes}: bytes the agent described in this backup (entries ×
 * block size); {@code changedBlocks}: map entries the snapshot changed (its delta); {@code sentBlocks}:
 * payloads uploaded; {@code newBlocks}: blocks newly stored; {@code storedBytes}: their stored
 * (compressed) size; {@code consistency}: what the agent said of its source at COMMIT ({@code UNKNOWN}
 * for a version 2 agent and for snapshots stored before it was recorded); {@code snapshotId}: a random
 * non-zero identity given at commit, so that an agent's state can tell this snapshot from another one
 * that got the same sequence (after a catalog restore); 0 = unknown, for snapshots stored before it was.
 */
public record SnapshotRecord(VolumeId volume, long sequence, long createdAtMillis, long volumeBytes, int blockSize,
                             long logicalBytes, long changedBlocks, long sentBlocks, long newBlocks, long storedBytes,
                             Consistency consistency, long snapshotId) {
    public SnapshotRecord {
        java.util.Objects.requireNonNull(consistency, "consistency");
    }

    /** A snapshot whose identity is unknown (stored before snapshots had one). */
    public SnapshotRecord(VolumeId volume, long sequence, long createdAtMillis, long volumeBytes, int blockSize,
                          long logicalBytes, long changedBlocks, long sentBlocks, long newBlocks, long storedBytes,
                          Consistency consistency) {
        this(volume, sequence, createdAtMillis, volumeBytes, blockSize, logicalBytes, changedBlocks, sentBlocks, newBlocks,
                storedBytes, consistency, 0);
    }

    /** A snapshot whose consistency nobody said. */
    public SnapshotRecord(VolumeId volume, long sequence, long createdAtMillis, long volumeBytes, int blockSize,
                          long logicalBytes, long changedBlocks, long sentBlocks, long newBlocks, long storedBytes) {
        this(volume, sequence, createdAtMillis, volumeBytes, blockSize, logicalBytes, changedBlocks, sentBlocks, newBlocks,
                storedBytes, Consistency.UNKNOWN);
    }

    public SnapshotId id() {
        return new SnapshotId(volume, sequence);
    }

    /** Blocks in this snapshot: ceil(volumeBytes / blockSize). */
    public long blockCount() {
        return VolumeRecord.blockCount(volumeBytes, blockSize);
    }
}
