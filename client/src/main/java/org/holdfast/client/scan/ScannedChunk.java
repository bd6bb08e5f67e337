package org.holdfast.client.scan;

import java.nio.ByteBuffer;

/**
 * Consecutive blocks read and hashed together: {@code blocks} blocks from {@code firstLbn}, their
 * bytes in {@code data} (block {@code i} at {@code i * blockSize}), fingerprints packed in
 * {@code fingerprints} and zero flags in {@code zero}. Owned by the {@link BlockReader}, which
 * reuses it once the consumer hands it back.
 */
public final class ScannedChunk {
    final ByteBuffer data;
    final byte[] fingerprints;
    final boolean[] zero;
    long firstLbn;
    int blocks;

    ScannedChunk(int chunkBytes, int blockSize) {
        int maxBlocks = chunkBytes / blockSize;
        this.data = ByteBuffer.allocateDirect(chunkBytes);
        this.fingerprints = new byte[maxBlocks * 32];
        this.zero = new boolean[maxBlocks];
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
}
