package org.holdfast.common.hash;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Tests whether a block is all zeros, eight bytes at a time. Zero blocks are never hashed, sent
 * or stored; their fingerprint on the wire is 32 zero bytes.
 */
public final class ZeroBlocks {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private ZeroBlocks() {
    }

    /** True if {@code len} bytes of {@code b} from {@code off} are all zero. */
    public static boolean isZero(byte[] b, int off, int len) {
        if (off < 0 || len < 0 || off > b.length - len) {
            throw new IndexOutOfBoundsException("range " + off + "+" + len + " outside " + b.length);
        }
        int i = off;
        int end = off + len;
        // OR eight longs per step: one branch per 64 bytes, and non-zero data usually fails on the first.
        for (; i + 64 <= end; i += 64) {
            long acc = (long) LONGS.get(b, i) | (long) LONGS.get(b, i + 8) | (long) LONGS.get(b, i + 16)
                    | (long) LONGS.get(b, i + 24) | (long) LONGS.get(b, i + 32) | (long) LONGS.get(b, i + 40)
                    | (long) LONGS.get(b, i + 48) | (long) LONGS.get(b, i + 56);
            if (acc != 0) {
                return false;
            }
        }
        for (; i + 8 <= end; i += 8) {
            if ((long) LONGS.get(b, i) != 0) {
                return false;
            }
        }
        for (; i < end; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * True if {@code len} bytes of {@code b} from absolute index {@code off} are all zero. Works on
     * heap and direct buffers; position and limit are not changed.
     */
    public static boolean isZero(ByteBuffer b, int off, int len) {
        if (off < 0 || len < 0 || off > b.limit() - len) {
            throw new IndexOutOfBoundsException("range " + off + "+" + len + " outside limit " + b.limit());
        }
        if (b.hasArray()) {
            return isZero(b.array(), b.arrayOffset() + off, len);
        }
        int i = off;
        int end = off + len;
        for (; i + 32 <= end; i += 32) {
            if ((b.getLong(i) | b.getLong(i + 8) | b.getLong(i + 16) | b.getLong(i + 24)) != 0) {
                return false;
            }
        }
        for (; i + 8 <= end; i += 8) {
            if (b.getLong(i) != 0) {
                return false;
            }
        }
        for (; i < end; i++) {
            if (b.get(i) != 0) {
                return false;
            }
        }
        return true;
    }
}
