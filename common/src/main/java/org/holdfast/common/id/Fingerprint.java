package org.holdfast.common.id;

import java.util.HexFormat;

/**
 * The SHA-256 of a block, held as four longs (big-endian) so that it costs no array.
 *
 * <p>Hot paths (agent hashing, the dedup engine) work on packed {@code byte[]} batches of
 * {@link #BYTES}-byte entries instead and only create this type at their edges.
 */
public final class Fingerprint implements Comparable<Fingerprint> {
    /** Length of a fingerprint in bytes. */
    public static final int BYTES = 32;

    private final long w0;
    private final long w1;
    private final long w2;
    private final long w3;

    private Fingerprint(long w0, long w1, long w2, long w3) {
        this.w0 = w0;
        this.w1 = w1;
        this.w2 = w2;
        this.w3 = w3;
    }

    /** Reads a fingerprint from {@code BYTES} bytes at {@code off}. */
    public static Fingerprint read(byte[] src, int off) {
        if (off < 0 || src.length - off < BYTES) {
            throw new IllegalArgumentException("need " + BYTES + " bytes at offset " + off + ", have " + (src.length - off));
        }
        return new Fingerprint(getLong(src, off), getLong(src, off + 8), getLong(src, off + 16), getLong(src, off + 24));
    }

    /** Wraps a 32-byte digest. */
    public static Fingerprint of(byte[] digest) {
        if (digest.length != BYTES) {
            throw new IllegalArgumentException("a fingerprint is " + BYTES + " bytes, got " + digest.length);
        }
        return read(digest, 0);
    }

    /** Parses 64 hex digits. */
    public static Fingerprint parse(String hex) {
        return of(HexFormat.of().parseHex(hex));
    }

    /** Writes the 32 bytes at {@code off}. */
    public void write(byte[] dst, int off) {
        putLong(dst, off, w0);
        putLong(dst, off + 8, w1);
        putLong(dst, off + 16, w2);
        putLong(dst, off + 24, w3);
    }

    /** A fresh 32-byte array. */
    public byte[] toBytes() {
        byte[] b = new byte[BYTES];
        write(b, 0);
        return b;
    }

    /** Word {@code i} (0..3) of the digest, big-endian; the bits are uniform, so usable as hash positions. */
    public long word(int i) {
        return switch (i) {
            case 0 -> w0;
            case 1 -> w1;
            case 2 -> w2;
            case 3 -> w3;
            default -> throw new IndexOutOfBoundsException(i);
        };
    }

    /** True if the 32 bytes at {@code off} equal this fingerprint. */
    public boolean matches(byte[] src, int off) {
        return getLong(src, off) == w0 && getLong(src, off + 8) == w1
                && getLong(src, off + 16) == w2 && getLong(src, off + 24) == w3;
    }

    /** Big-endian long at {@code off}. */
    public static long getLong(byte[] b, int off) {
        return ((long) b[off] << 56) | ((long) (b[off + 1] & 0xff) << 48) | ((long) (b[off + 2] & 0xff) << 40)
                | ((long) (b[off + 3] & 0xff) << 32) | ((long) (b[off + 4] & 0xff) << 24)
                | ((long) (b[off + 5] & 0xff) << 16) | ((long) (b[off + 6] & 0xff) << 8) | (b[off + 7] & 0xffL);
    }

    private static void putLong(byte[] b, int off, long v) {
        for (int i = 7; i >= 0; i--) {
            b[off + i] = (byte) v;
            v >>>= 8;
        }
    }

    public String hex() {
        return HexFormat.of().formatHex(toBytes());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Fingerprint f && f.w0 == w0 && f.w1 == w1 && f.w2 == w2 && f.w3 == w3;
    }

    @Override
    public int hashCode() {
        return (int) (w0 ^ (w0 >>> 32));
    }

    @Override
    public int compareTo(Fingerprint o) {
        int c = Long.compareUnsigned(w0, o.w0);
        if (c == 0) c = Long.compareUnsigned(w1, o.w1);
        if (c == 0) c = Long.compareUnsigned(w2, o.w2);
        if (c == 0) c = Long.compareUnsigned(w3, o.w3);
        return c;
    }

    @Override
    public String toString() {
        return hex().substring(0, 16);
    }
}
