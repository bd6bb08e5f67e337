package org.holdfast.server.ingest.cluster;

import java.util.Random;
import org.holdfast.common.hash.BlockHasher;

/** Blocks and their fingerprints for the tests of range data on the worker link. */
public final class RangeBlocks {
    /** The block size these tests store. */
    public static final int BS = 4096;

    private RangeBlocks() {
    }

    /** {@code n} blocks from {@code seed}: random bytes, or mostly zeros (so zstd pays) if {@code compressible}. */
    public static byte[] blocks(long seed, int n, boolean compressible) {
        byte[] b = new byte[n * BS];
        Random r = new Random(seed);
        if (compressible) {
            for (int i = 0; i < b.length; i += 64) {
                b[i] = (byte) r.nextInt();
            }
        } else {
            r.nextBytes(b);
        }
        return b;
    }

    /** The SHA-256 fingerprints of the blocks in {@code raw}, 32 bytes each. */
    public static byte[] fps(byte[] raw) {
        int n = raw.length / BS;
        byte[] f = new byte[n * 32];
        for (int k = 0; k < n; k++) {
            BlockHasher.forCurrentThread().sha256(raw, k * BS, BS, f, k * 32);
        }
        return f;
    }
}
