package org.holdfast.server.store;

/** Big-endian integer codec for on-disk layouts (every layout in the server is big-endian). */
public final class Bytes {
    private Bytes() {
    }

    public static long getLong(byte[] b, int off) {
        return ((long) b[off] << 56) | ((long) (b[off + 1] & 0xff) << 48) | ((long) (b[off + 2] & 0xff) << 40)
                | ((long) (b[off + 3] & 0xff) << 32) | ((long) (b[off + 4] & 0xff) << 24)
                | ((long) (b[off + 5] & 0xff) << 16) | ((long) (b[off + 6] & 0xff) << 8) | (b[off + 7] & 0xffL);
    }

    public static void putLong(byte[] b, int off, long v) {
        for (int i = 7; i >= 0; i--) {
            b[off + i] = (byte) v;
            v >>>= 8;
        }
    }

    public static int getInt(byte[] b, int off) {
        return (b[off] << 24) | ((b[off + 1] & 0xff) << 16) | ((b[off + 2] & 0xff) << 8) | (b[off + 3] & 0xff);
    }

    public static void putInt(byte[] b, int off, int v) {
        b[off] = (byte) (v >>> 24);
        b[off + 1] = (byte) (v >>> 16);
        b[off + 2] = (byte) (v >>> 8);
        b[off + 3] = (byte) v;
    }

    public static int getShort(byte[] b, int off) {
        return ((b[off] & 0xff) << 8) | (b[off + 1] & 0xff);
    }

    public static void putShort(byte[] b, int off, int v) {
        b[off] = (byte) (v >>> 8);
        b[off + 1] = (byte) v;
    }

    /** Whether {@code a} begins with {@code prefix} (a key scan's end test). */
    public static boolean startsWith(byte[] a, byte[] prefix) {
        return a.length >= prefix.length && java.util.Arrays.equals(a, 0, prefix.length, prefix, 0, prefix.length);
    }
}
