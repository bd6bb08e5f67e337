package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * Body layout of the GC delta frames on the worker link (distributed GC, thesis 7.2.4): the master
 * routes the GC metadata updates of each operation by PBN range and sends a worker the ones of its
 * range; the worker logs them in its BOSC log and acknowledges once the log is synced. All integers
 * big-endian; every count is checked against its limit before anything is read, and every body has
 * exactly the bytes its count names.
 *
 * <pre>
 *  GC_DELTA         | opId:u64 | part:u32 | count:u32 | count * (kind:u8 | pbn:u64 | value:u64) |   16 + 17 * count bytes
 *  GC_DELTA_APPLIED | opId:u64 | part:u32 |                                                      12 bytes
 *  GC_DELTA_FAILED  | opId:u64 | part:u32 | message:str |                                        14 + n bytes
 * </pre>
 *
 * opId 1..2^43-1, part 0..2^20-1 (so opId * 2^20 + part, the worker's delta id, fits a signed
 * long); count 1..{@link ProtocolLimits#MAX_GC_DELTA_UPDATES} (over: LIMIT_EXCEEDED, 0: BAD_FRAME);
 * kind 1 (RC add), 2 (raise expiry) or 3 (pin add); pbn at least 1. Anything else is BAD_FRAME.
 */
public final class GcDeltaFrames {
    /** Bytes of one update on the wire. */
    public static final int UPDATE_BYTES = 1 + 8 + 8;
    private static final int HEADER = 8 + 4 + 4;

    private GcDeltaFrames() {
    }

    static boolean isGcDelta(MessageType type) {
        return type.code() >= MessageType.GC_DELTA.code() && type.code() <= MessageType.GC_DELTA_FAILED.code();
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case GC_DELTA -> HEADER + ProtocolLimits.MAX_GC_DELTA_UPDATES * UPDATE_BYTES;
            case GC_DELTA_APPLIED -> 8 + 4;
            case GC_DELTA_FAILED -> 8 + 4 + 2 + ProtocolLimits.MAX_ERROR_MESSAGE;
            default -> throw new IllegalArgumentException(type + " is not a GC delta frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof GcDelta d) {
            return HEADER + (long) d.count() * UPDATE_BYTES;
        } else if (m instanceof GcDeltaApplied) {
            return 8 + 4;
        } else if (m instanceof GcDeltaFailed f) {
            return 8 + 4 + 2 + ByteBufUtil.utf8Bytes(f.message());
        }
        throw new IllegalArgumentException(m.type() + " is not a GC delta frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof GcDelta d) {
            out.writeLong(d.opId()).writeInt(d.part()).writeInt(d.count());
            // one bulk write: a call per field on a leak-tracked buffer (tests run paranoid) costs a stack trace each
            ByteBuffer updates = ByteBuffer.allocate(d.count() * UPDATE_BYTES);
            for (int i = 0; i < d.count(); i++) {
                updates.put(d.kinds()[i]).putLong(d.pbns()[i]).putLong(d.values()[i]);
            }
            out.writeBytes(updates.array());
        } else if (m instanceof GcDeltaApplied a) {
            out.writeLong(a.opId()).writeInt(a.part());
        } else if (m instanceof GcDeltaFailed f) {
            out.writeLong(f.opId()).writeInt(f.part());
            FrameEncoder.writeStr(out, f.message());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a GC delta frame");
        }
    }

    /** Parses a GC delta frame's body; a count over its limit is LIMIT_EXCEEDED, short bodies and bad values BAD_FRAME. */
    static Message parseBody(MessageType type, ByteBuf b) {
        long opId = BodyFields.u64(b, "opId");
        long part = BodyFields.u32(b, "part");
        String bad = GcDelta.problem(opId, part);
        if (bad != null) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, type + " " + bad);
        }
        return switch (type) {
            case GC_DELTA -> {
                int count = BodyFields.count(b, ProtocolLimits.MAX_GC_DELTA_UPDATES, "GC_DELTA count", 1);
                // the whole body first: a count the body cannot hold is refused before any array is sized by it
                ByteBuffer updates = ByteBuffer.wrap(BodyFields.bytes(b, count * UPDATE_BYTES, "updates"));
                byte[] kinds = new byte[count];
                long[] pbns = new long[count];
                long[] values = new long[count];
                for (int i = 0; i < count; i++) {
                    int kind = updates.get() & 0xff;
                    long pbn = updates.getLong();
                    String wrong = GcDelta.updateProblem(i, kind, pbn);
                    if (wrong != null) {
                        throw new ProtocolException(ErrorCode.BAD_FRAME, "GC_DELTA " + wrong);
                    }
                    kinds[i] = (byte) kind;
                    pbns[i] = pbn;
                    values[i] = updates.getLong();
                }
                yield new GcDelta(opId, (int) part, count, kinds, pbns, values);
            }
            case GC_DELTA_APPLIED -> new GcDeltaApplied(opId, (int) part);
            case GC_DELTA_FAILED -> new GcDeltaFailed(opId, (int) part, BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE));
            default -> throw new IllegalArgumentException(type + " is not a GC delta frame");
        };
    }
}
