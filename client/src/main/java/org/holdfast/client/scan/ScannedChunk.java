package org.holdfast.client.scan;

import java.nio.ByteBuffer;

/**
 * Consecutive blocks read and hashed together: {@code blocks} blocks from {@code firstLbn}, their
 * bytes in {@code data} (block {@code i} at {@code i * blockSize}), fingerprints packed in
 * {@code fingerprints}, zero flags in {@code zero} and possession tags in {@code tags} (0 for zero
 * blocks, and when the reader has no session secret). Blocks of holes were not read: they are zero
 * blocks, and their bytes in {@code data} are unspecified. Owned by the {@link BlockReader}, which
 * reuses it once the consumer hands it back.
 */
public final class ScannedChunk {
    final ByteBuffer data;
    final byte[] fingerprints;
    final boolean[] zero;
    final long[] tags;
    long firstLbn;
    int blocks;
    long sourceBytesRead;
    int holeBlocks;

    ScannedChunk(int chunkBytes, int blockSize) {
        int maxBlocks = chunkBytes / blockSize;
        this.data = ByteBuffer.allocateDirect(chunkBytes);
        this.fingerprints = new byte[maxBlocks * 32];
        this.zero = new boolean[maxBlocks];
        this.tags = new long[maxBlocks];
    }

    public long firstLbn() {
        return firstLbn;
    }

    public int blocks() {
        return blocks;
    }

    /** The block bytes (direct; absolute indexing, do not move its position). */
    public ByteBuffer data() {
        return data;
    }

    /** Packed fingerprints, block {@code i} at {@code i * 32}. */
    public byte[] fingerprints() {
        return fingerprints;
    }

    public boolean isZero(int i) {
        return zero[i];
    }

    /** Possession tag of block {@code i} (0 for a zero block). */
    public long tag(int i) {
        return tags[i];
    }

    /** Bytes of this chunk actually read from the source (holes and the tail past the volume are not). */
    public long sourceBytesRead() {
        return sourceBytesRead;
    }

    /** Blocks of this chunk that lay wholly in holes and were not read. */
    public int holeBlocks() {
        return holeBlocks;
    }
}
