package org.holdfast.server.catalog;

import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;

/**
 * One committed snapshot. {@code logicalBytes}: bytes the agent described in this backup (entries ×
 * block size); {@code changedBlocks}: map entries the snapshot changed (its delta); {@code sentBlocks}:
 * payloads uploaded; {@code newBlocks}: blocks newly stored; {@code storedBytes}: their stored
 * (compressed) size.
 */
public record SnapshotRecord(VolumeId volume, long sequence, long createdAtMillis, long volumeBytes, int blockSize,
                             long logicalBytes, long changedBlocks, long sentBlocks, long newBlocks, long storedBytes) {

    public SnapshotId id() {
        return new SnapshotId(volume, sequence);
    }

    /** Blocks in this snapshot: ceil(volumeBytes / blockSize). */
    public long blockCount() {
        return VolumeRecord.blockCount(volumeBytes, blockSize);
    }
}
