package org.holdfast.common.protocol;

/** One entry of SNAPSHOT_LIST: a committed snapshot and its sizes (52 bytes on the wire). */
public record SnapshotInfo(long sequence, long createdAtMillis, long volumeBytes, int blockSize, long logicalBytes,
                           long changedBlocks, long storedBytes) {
    /** Encoded size of one entry. */
    public static final int WIRE_BYTES = 8 + 8 + 8 + 4 + 8 + 8 + 8;
}
