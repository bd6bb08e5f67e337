package org.holdfast.client.scan;

import java.security.SecureRandom;
import net.openhft.hashing.LongTupleHashFunction;

/**
 * The cheap 128-bit hash that the state file keeps beside each block's SHA-256 so that an
 * incremental backup computes SHA-256 only for blocks whose cheap hash changed (docs/agent.md,
 * "Change detection with a cheap hash"). XXH3-128 runs at about 10 GB/s per core against
 * SHA-256's 1.5 GB/s; it is not collision resistant, which is the documented trade-off.
 *
 * <p>The seed is random per volume state and kept in the state file. It keeps these hashes
 * unrelated to the possession fingerprint (a fixed-seed XXH3-128 the server trusts as a proof of
 * possession, which must never be written down beside the data), and it makes a colliding block
 * hard to prepare for anyone who cannot read the state directory (XXH3 itself promises nothing
 * against a deliberate collision).
 *
 * <p>The value (0, 0) means "unknown" (an entry carried over from a state without cheap
 * hashes): it never matches, so such a block always gets its SHA-256. Thread-safe; allocates
 * nothing per block given the caller's scratch.
 */
public final class ChangeHash {
    /** Bytes of one hash in the state file. */
    public static final int BYTES = 16;

    private final long seed;
    private final LongTupleHashFunction function;

    /** The hash under {@code seed}. */
    public ChangeHash(long seed) {
        this.seed = seed;
        this.function = LongTupleHashFunction.xx128(seed);
    }

    /** A hash under a fresh random seed, for a state that has none yet. */
    public static ChangeHash withRandomSeed() {
        return new ChangeHash(new SecureRandom().nextLong());
    }

    public long seed() {
        return seed;
    }

    /**
     * Writes the hash of {@code len} bytes of {@code block} at {@code off} into {@code out[outOff]}
     * and {@code out[outOff + 1]}; {@code scratch} holds at least two longs.
     */
    public void hash(byte[] block, int off, int len, long[] scratch, long[] out, int outOff) {
        function.hashBytes(block, off, len, scratch);
        out[outOff] = scratch[0];
        out[outOff + 1] = scratch[1];
    }

    /** True if entry {@code i} of {@code a} and of {@code b} (two longs each) are equal and known. */
    static boolean sameKnown(long[] a, long[] b, int i) {
        long x = a[2 * i];
        long y = a[2 * i + 1];
        return x == b[2 * i] && y == b[2 * i + 1] && (x | y) != 0;
    }
}
