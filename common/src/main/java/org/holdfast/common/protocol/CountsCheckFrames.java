package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/**
 * Body layout of the counts check frames on the worker link (cluster version 7,
 * {@link Register#COUNTS_CHECK_VERSION}): the master streams its catalog counts of a worker's range
 * in bounded spans, the worker answers each with what differs. All integers big-endian.
 *
 * <pre>
 *  COUNTS_CHECK   | requestId:u64 | first:u64 | limit:u64 | now:u64 | n:u32 |
 *                 | n x ( pbn:u64 | rc:u32 | pins:u32 | et:u64 ) |                                       36 + 24n bytes
 *  COUNTS_CHECKED | requestId:u64 | status:u8 | compared:u64 | rcBelow:u64 | rcAbove:u64 | pinsDiffer:u64 |
 *                 | notHeld:u64 | s:u16 | s x ( pbn:u64 | kind:u8 ) | message:str |                      53 + 9s + m bytes
 * </pre>
 *
 * n at most {@link CountsCheck#MAX_RECORDS}, records ascending inside [first, limit), limit - first at
 * most {@link CountsCheck#MAX_SPAN}, first above 0, now and et (epoch ms) below 2^63, rc and pins below 2^31; status 0 (compared) or
 * 1 (refused, message says why); s at most {@link CountsChecked#MAX_SAMPLES}, kind 1 (RC below),
 * 2 (RC above), 3 (pins differ), 4 (not held); counts below 2^63. Anything else is BAD_FRAME; a
 * frame longer than its type's largest body is LIMIT_EXCEEDED before it is read.
 */
public final class CountsCheckFrames {
    /** Bytes of a COUNTS_CHECK body before its records. */
    public static final int CHECK_HEADER_BYTES = 8 + 8 + 8 + 8 + 4;
    /** Bytes of one COUNTS_CHECK record. */
    public static final int RECORD_BYTES = 8 + 4 + 4 + 8;
    private static final int CHECKED_FIXED_BYTES = 8 + 1 + 5 * 8 + 2 + 2;

    private CountsCheckFrames() {
    }

    static boolean isCountsCheck(MessageType type) {
        return type == MessageType.COUNTS_CHECK || type == MessageType.COUNTS_CHECKED;
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case COUNTS_CHECK -> CHECK_HEADER_BYTES + CountsCheck.MAX_RECORDS * RECORD_BYTES;
            case COUNTS_CHECKED -> CHECKED_FIXED_BYTES + CountsChecked.MAX_SAMPLES * 9 + ProtocolLimits.MAX_ERROR_MESSAGE;
            default -> throw new IllegalArgumentException(type + " is not a counts check frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof CountsCheck c) {
            return CHECK_HEADER_BYTES + (long) c.pbns().length * RECORD_BYTES;
        } else if (m instanceof CountsChecked c) {
            return CHECKED_FIXED_BYTES + 9L * c.samplePbns().length + ByteBufUtil.utf8Bytes(c.message());
        }
        throw new IllegalArgumentException(m.type() + " is not a counts check frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof CountsCheck c) {
            out.writeLong(c.requestId()).writeLong(c.first()).writeLong(c.limit()).writeLong(c.now()).writeInt(c.pbns().length);
            for (int i = 0; i < c.pbns().length; i++) {
                out.writeLong(c.pbns()[i]).writeInt(c.rc()[i]).writeInt(c.pins()[i]).writeLong(c.et()[i]);
            }
        } else if (m instanceof CountsChecked c) {
            out.writeLong(c.requestId()).writeByte(c.status()).writeLong(c.compared()).writeLong(c.rcBelow()).writeLong(c.rcAbove())
                    .writeLong(c.pinsDiffer()).writeLong(c.notHeld()).writeShort(c.samplePbns().length);
            for (int i = 0; i < c.samplePbns().length; i++) {
                out.writeLong(c.samplePbns()[i]).writeByte(c.sampleKinds()[i]);
            }
            FrameEncoder.writeStr(out, c.message());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a counts check frame");
        }
    }

    /** Parses a counts check frame's body; bad values are BAD_FRAME, a long message LIMIT_EXCEEDED. */
    static Message parseBody(MessageType type, ByteBuf b) {
        long requestId = BodyFields.u64(b, "requestId");
        return switch (type) {
            case COUNTS_CHECK -> {
                long first = BodyFields.u64(b, "first");
                long limit = BodyFields.u64(b, "limit");
                long now = BodyFields.u64(b, "now");
                long n = BodyFields.u32(b, "records");
                if (n > CountsCheck.MAX_RECORDS || n * RECORD_BYTES != b.readableBytes()) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, type + " says " + n + " records (at most " + CountsCheck.MAX_RECORDS
                            + ") but has " + b.readableBytes() + " bytes of them");
                }
                long[] pbns = new long[(int) n];
                int[] rc = new int[(int) n];
                int[] pins = new int[(int) n];
                long[] et = new long[(int) n];
                for (int i = 0; i < n; i++) {
                    pbns[i] = b.readLong();
                    rc[i] = b.readInt();
                    pins[i] = b.readInt();
                    et[i] = b.readLong();
                }
                checked(type, CountsCheck.problem(first, limit, now, pbns, rc, pins, et));
                yield new CountsCheck(requestId, first, limit, now, pbns, rc, pins, et);
            }
            case COUNTS_CHECKED -> {
                int status = BodyFields.u8(b, "status");
                long[] counts = new long[5];
                String[] names = {"compared", "rcBelow", "rcAbove", "pinsDiffer", "notHeld"};
                for (int i = 0; i < counts.length; i++) {
                    counts[i] = BodyFields.u64(b, names[i]);
                }
                int s = BodyFields.u16(b, "samples");
                if (s > CountsChecked.MAX_SAMPLES) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, type + " names " + s + " samples (at most "
                            + CountsChecked.MAX_SAMPLES + ")");
                }
                long[] pbns = new long[s];
                int[] kinds = new int[s];
                for (int i = 0; i < s; i++) {
                    pbns[i] = BodyFields.u64(b, "samplePbn");
                    kinds[i] = BodyFields.u8(b, "sampleKind");
                }
                String message = BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE);
                checked(type, CountsChecked.problem(status, counts, pbns, kinds));
                yield new CountsChecked(requestId, status, counts[0], counts[1], counts[2], counts[3], counts[4], pbns, kinds, message);
            }
            default -> throw new IllegalArgumentException(type + " is not a counts check frame");
        };
    }

    private static void checked(MessageType type, String problem) {
        if (problem != null) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, type + " " + problem);
        }
    }
}
