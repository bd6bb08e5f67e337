package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * NEED (0x13), server to agent: answers the ENTRIES run starting at {@code startLbn}. Bit
 * {@code i} set = send the payload of {@code startLbn + i}. Bit order: bit {@code i} is
 * {@code bitmap[i / 8] & (1 << (i % 8))} (least significant bit first); the unused high bits of
 * the last byte are zero.
 */
public record Need(long startLbn, int count, byte[] bitmap) implements Message {
    public Need {
        if (startLbn < 0) {
            throw new IllegalArgumentException("startLbn must not be negative: " + startLbn);
        }
        if (count < 1 || count > ProtocolLimits.MAX_RUN_ENTRIES) {
            throw new IllegalArgumentException("NEED for " + count + " entries, must be 1.." + ProtocolLimits.MAX_RUN_ENTRIES);
        }
        if (bitmap == null || bitmap.length != bitmapBytes(count)) {
            throw new IllegalArgumentException("bitmap must be exactly " + bitmapBytes(count) + " bytes");
        }
        if (count % 8 != 0 && (bitmap[bitmap.length - 1] & 0xff) >>> (count % 8) != 0) {
            throw new IllegalArgumentException("bits beyond count " + count + " are set");
        }
    }

    /** Bytes of a bitmap for {@code count} entries: {@code ceil(count / 8)}. */
    public static int bitmapBytes(int count) {
        return (count + 7) >>> 3;
    }

    /** Sets bit {@code i} of {@code bitmap}. */
    public static void set(byte[] bitmap, int i) {
        bitmap[i >>> 3] |= (byte) (1 << (i & 7));
    }

    /** True if the payload of entry {@code i} (LBN {@code startLbn + i}) is wanted. */
    public boolean isNeeded(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException(i);
        }
        return (bitmap[i >>> 3] & (1 << (i & 7))) != 0;
    }

    /** How many bits are set. */
    public int neededCount() {
        int n = 0;
        for (byte b : bitmap) {
            n += Integer.bitCount(b & 0xff);
        }
        return n;
    }

    @Override
    public MessageType type() {
        return MessageType.NEED;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Need n && n.startLbn == startLbn && n.count == count && Arrays.equals(n.bitmap, bitmap);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(startLbn) * 31 + Arrays.hashCode(bitmap);
    }

    @Override
    public String toString() {
        return "Need[startLbn=" + startLbn + ", count=" + count + ", needed=" + neededCount() + "]";
    }
}
