package org.holdfast.client.scan;

import java.nio.ByteBuffer;

/**
 * Consecutive blocks read and hashed together: {@code blocks} blocks from {@code firstLbn}, their
 * bytes in {@code data} (block {@code i} at {@code i * blockSize}), fingerprints packed in
 * {@code fingerprints}, zero flags in {@code zero} and possession tags in {@code tags} (0 for zero
 * blocks, and when the reader has no session secret). Blocks of holes were not read: they are zero
 * blocks, and their bytes in {@code data} are unspecified. Owned by the {@link BlockReader}, which
 * reuses it once the consumer hands it back.
 *
 * <p>With cheap change hashes, {@code changeHashes} holds each block's {@link ChangeHash} (two longs
 * per block), {@code previousHashes} and {@code previousFingerprints} the previous state's entries of
 * the same LBNs (filled before hashing when unchanged blocks may keep their stored SHA-256), and
 * {@code sha256Blocks} counts the blocks whose SHA-256 was really computed.
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
    final long[] changeHashes;
    final long[] previousHashes;
    final byte[] previousFingerprints;
    int sha256Blocks;

    ScannedChunk(int chunkBytes, int blockSize, boolean changeHashing, boolean reuse) {
        int maxBlocks = chunkBytes / blockSize;
        this.data = ByteBuffer.allocateDirect(chunkBytes);
        this.fingerprints = new byte[maxBlocks * 32];
        this.zero = new boolean[maxBlocks];
        this.tags = new long[maxBlocks];
        this.changeHashes = changeHashing ? new long[2 * maxBlocks] : null;
        this.previousHashes = reuse ? new long[2 * maxBlocks] : null;
        this.previousFingerprints = reuse ? new byte[maxBlocks * 32] : null;
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

    /** Change hashes, two longs per block; null unless the reader computes them. */
    public long[] changeHashes() {
        return changeHashes;
    }

    /** Blocks of this chunk whose SHA-256 was computed (not zero, not kept from the previous state). */
    public int sha256Blocks() {
        return sha256Blocks;
    }

    /** Blocks of this chunk that lay wholly in holes and were not read. */
    public int holeBlocks() {
        return holeBlocks;
    }
}
