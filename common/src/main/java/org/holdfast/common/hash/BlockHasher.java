package org.holdfast.common.hash;

import java.nio.ByteBuffer;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/**
 * SHA-256 of blocks, written straight into packed fingerprint arrays (32 bytes per block) so that
 * hashing a block allocates nothing. One instance owns one {@link MessageDigest} and is not
 * thread-safe: give each hashing thread its own, or use {@link #forCurrentThread()}.
 *
 * <p>{@link #fingerprint} maps all-zero blocks to the all-zero fingerprint, as the protocol wants;
 * {@link #sha256} always hashes (the server uses it to verify payloads).
 */
public final class BlockHasher {
    private static final ThreadLocal<BlockHasher> PER_THREAD = ThreadLocal.withInitial(BlockHasher::new);

    private final MessageDigest digest;
    private byte[] scratch = new byte[0];

    public BlockHasher() {
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** This thread's hasher. */
    public static BlockHasher forCurrentThread() {
        return PER_THREAD.get();
    }

    /** Writes the SHA-256 of {@code len} bytes of {@code src} at {@code off} into {@code dst} at {@code dstOff}. */
    public void sha256(byte[] src, int off, int len, byte[] dst, int dstOff) {
        digest.update(src, off, len);
        finish(dst, dstOff);
    }

    /**
     * Writes the SHA-256 of {@code len} bytes of {@code src} from absolute index {@code off} into
     * {@code dst} at {@code dstOff}; {@code src}'s position and limit are unchanged.
     */
    public void sha256(ByteBuffer src, int off, int len, byte[] dst, int dstOff) {
        if (src.hasArray()) {
            sha256(src.array(), src.arrayOffset() + off, len, dst, dstOff);
            return;
        }
        // MessageDigest copies direct buffers through a heap array anyway; copying into our own
        // reused array avoids the per-call ByteBuffer view that update(ByteBuffer) would need.
        if (scratch.length < len) {
            scratch = new byte[len];
        }
        src.get(off, scratch, 0, len);
        digest.update(scratch, 0, len);
        finish(dst, dstOff);
    }

    /** Like {@link #sha256(byte[], int, int, byte[], int)} but an all-zero block gets 32 zero bytes; returns true for such a block. */
    public boolean fingerprint(byte[] src, int off, int len, byte[] dst, int dstOff) {
        if (ZeroBlocks.isZero(src, off, len)) {
            Arrays.fill(dst, dstOff, dstOff + Fingerprint.BYTES, (byte) 0);
            return true;
        }
        sha256(src, off, len, dst, dstOff);
        return false;
    }

    /** Like {@link #sha256(ByteBuffer, int, int, byte[], int)} but an all-zero block gets 32 zero bytes; returns true for such a block. */
    public boolean fingerprint(ByteBuffer src, int off, int len, byte[] dst, int dstOff) {
        if (ZeroBlocks.isZero(src, off, len)) {
            Arrays.fill(dst, dstOff, dstOff + Fingerprint.BYTES, (byte) 0);
            return true;
        }
        sha256(src, off, len, dst, dstOff);
        return false;
    }

    /** True if the SHA-256 of the given bytes equals the 32 bytes of {@code expected} at {@code expOff}. */
    public boolean verify(byte[] src, int off, int len, byte[] expected, int expOff, byte[] scratch32) {
        sha256(src, off, len, scratch32, 0);
        return Arrays.equals(scratch32, 0, Fingerprint.BYTES, expected, expOff, expOff + Fingerprint.BYTES);
    }

    private void finish(byte[] dst, int dstOff) {
        try {
            digest.digest(dst, dstOff, Fingerprint.BYTES);
        } catch (DigestException e) {
            throw new IllegalArgumentException("no room for a fingerprint at offset " + dstOff + " of " + dst.length, e);
        }
    }
}
