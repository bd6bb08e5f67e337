package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Reads the fields of a message body (u8 to u64, LBNs, counts, strings), each checked against the
 * bytes left and its limit before anything is allocated for it: the vocabulary every body parser
 * shares ({@link MessageParser}, {@link BlockPayloadParser} and the cluster frames' classes).
 */
final class BodyFields {
    private BodyFields() {
    }

    static void need(ByteBuf b, int n, String field) {
        if (b.readableBytes() < n) {
            throw new ProtocolException(ErrorCode.BAD_FRAME,
                    "truncated body: " + field + " needs " + n + " bytes, " + b.readableBytes() + " left");
        }
    }

    /** The next {@code n} bytes as a new array (a field of fixed size: fingerprints, a payload). */
    static byte[] bytes(ByteBuf b, int n, String field) {
        need(b, n, field);
        byte[] a = new byte[n];
        b.readBytes(a);
        return a;
    }

    static int u8(ByteBuf b, String field) {
        need(b, 1, field);
        return b.readUnsignedByte();
    }

    static int u16(ByteBuf b, String field) {
        need(b, 2, field);
        return b.readUnsignedShort();
    }

    static long u32(ByteBuf b, String field) {
        need(b, 4, field);
        return b.readUnsignedInt();
    }

    static long u64(ByteBuf b, String field) {
        need(b, 8, field);
        return b.readLong();
    }

    /** An LBN: a u64 that must fit a signed long (a volume cannot have 2^63 blocks). */
    static long lbn(ByteBuf b, String field) {
        long v = u64(b, field);
        if (v < 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, field + " " + Long.toUnsignedString(v) + " is out of range");
        }
        return v;
    }

    static int count(ByteBuf b, int max, String field, int min) {
        long n = u32(b, field);
        if (n > max) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, field + " " + n + " is over its limit " + max);
        }
        if (n < min) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, field + " " + n + " is below " + min);
        }
        return (int) n;
    }

    static String str(ByteBuf b, String field, int max) {
        int len = u16(b, field + " length");
        if (len > max) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, field + " of " + len + " bytes is over its limit " + max);
        }
        need(b, len, field);
        String s = b.toString(b.readerIndex(), len, StandardCharsets.UTF_8);
        b.skipBytes(len);
        return s;
    }
}
