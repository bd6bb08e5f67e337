package org.holdfast.common.hash;

import net.openhft.hashing.LongHashFunction;
import net.openhft.hashing.LongTupleHashFunction;

/**
 * Proof that an agent holds a block's content, not only its fingerprint (docs/architecture.md,
 * "Threat model").
 *
 * <p>With global dedup a SHA-256 fingerprint would be a key to the data: whoever names it gets a
 * reference to the block. So the agent proves possession per block with a <em>possession
 * tag</em>: {@code pf = XXH3-128(content)} under a fixed domain seed (the <em>possession
 * fingerprint</em>, 16 bytes, which the server keeps per PBN and never sends), and
 * {@code tag = XXH3-64(secret || pf)} seeded from the session's 32-byte random secret. Someone who
 * knows only the SHA-256 cannot compute {@code pf}, so cannot compute the tag; the per-session
 * secret makes a tag seen once useless in any other session. XXH3 is not a cryptographic MAC, but
 * the secret it guards ({@code pf}) is itself unknown to the attacker; forging a tag means
 * guessing 64 bits per block. XXH3 runs at about 10 GB/s, a small share beside SHA-256.
 *
 * <p>Heap arrays only: hashing a direct buffer would need the library to reach into JDK internals.
 *
 * <p>An instance carries one session's key and scratch: not thread-safe, allocates nothing per
 * block. The static {@code pf} methods are thread-safe given the caller's scratch.
 */
public final class PossessionProof {
    /** Bytes of a possession fingerprint. */
    public static final int PF_BYTES = 16;
    /** Bytes of a session secret. */
    public static final int SECRET_BYTES = 32;
    /** Fixed domain seed of the possession fingerprint ("HF-pf-v1"); changing it invalidates every stored pf. */
    static final long PF_SEED = 0x48462d70662d7631L;
    private static final LongTupleHashFunction PF = LongTupleHashFunction.xx128(PF_SEED);

    private final LongHashFunction tagFunction;
    private final byte[] keyed = new byte[SECRET_BYTES + PF_BYTES];
    private final long[] pfScratch = new long[2];
    private final byte[] pfBytes = new byte[PF_BYTES];

    /** A prover (agent) or checker (server) for the session whose secret is {@code secret} (32 bytes, copied). */
    public PossessionProof(byte[] secret) {
        if (secret == null || secret.length != SECRET_BYTES) {
            throw new IllegalArgumentException("possession secret must be " + SECRET_BYTES + " bytes");
        }
        System.arraycopy(secret, 0, keyed, 0, SECRET_BYTES);
        tagFunction = LongHashFunction.xx3(getLong(secret, 0) ^ getLong(secret, 24));
    }

    /** Writes the possession fingerprint of {@code len} bytes of {@code block} at {@code off} into {@code out} at {@code outOff}. */
    public static void pf(byte[] block, int off, int len, byte[] out, int outOff, long[] scratch) {
        PF.hashBytes(block, off, len, scratch);
        putLong(out, outOff, scratch[0]);
        putLong(out, outOff + 8, scratch[1]);
    }

    /** The tag of the block whose possession fingerprint is {@code pf[off..off+16)}. */
    public long tag(byte[] pf, int off) {
        System.arraycopy(pf, off, keyed, SECRET_BYTES, PF_BYTES);
        return tagFunction.hashBytes(keyed);
    }

    /** The tag of {@code len} bytes of {@code block} at {@code off}. */
    public long tag(byte[] block, int off, int len) {
        pf(block, off, len, pfBytes, 0, pfScratch);
        return tag(pfBytes, 0);
    }

    private static void putLong(byte[] b, int off, long v) {
        for (int i = 7; i >= 0; i--) {
            b[off + i] = (byte) v;
            v >>>= 8;
        }
    }

    private static long getLong(byte[] b, int off) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[off + i] & 0xff);
        }
        return v;
    }
}
