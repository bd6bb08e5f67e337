package org.holdfast.server.catalog;

import org.holdfast.common.id.VolumeId;

/** A protected volume as the catalog knows it; {@code internalId} is what map and snapshot keys use. */
public record VolumeRecord(VolumeId name, long internalId, int blockSize, long createdAtMillis, long latestSequence, long volumeBytes) {

    /** Blocks in the latest snapshot. */
    public long blockCount() {
        return blockCount(volumeBytes, blockSize);
    }

    /** ceil(volumeBytes / blockSize). */
    public static long blockCount(long volumeBytes, int blockSize) {
        return volumeBytes / blockSize + (volumeBytes % blockSize == 0 ? 0 : 1);
    }
}
