package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/**
 * Body layout of the GC sweep frames on the worker link (distributed GC, thesis 7.2.4): the master
 * asks a worker to sweep its PBN range with its own GC metadata; the worker answers with the
 * figures or why not. All integers big-endian; every body has exactly the bytes listed.
 *
 * <pre>
 *  GC_SWEEP        | requestId:u64 | now:u64 | flags:u8 |                                          17 bytes
 *  GC_SWEPT        | requestId:u64 | flags:u8 | horizon:u64 | chunksVisited:u64 | chunksSkipped:u64 |
 *                  | blocksFreed:u64 | reclaimable:u64 | keptReferenced:u64 | keptUnexpired:u64 |
 *                  | keptPinned:u64 | bytesFreed:u64 | millis:u64 |                                89 bytes
 *  GC_SWEEP_FAILED | requestId:u64 | reason:u8 | message:str |                                   11 + n bytes
 * </pre>
 *
 * now 0 (none) or an epoch millisecond below 2^63; flags bit 0 = dry run, other bits must be 0;
 * every GC_SWEPT figure below 2^63 (bytesFreed may be 2^64-1: unknown), freed at most reclaimable;
 * reason 1 (busy), 2 (refused) or 3 (failed). Anything else is BAD_FRAME.
 */
public final class GcSweepFrames {
    /** Bytes of a GC_SWEEP body. */
    public static final int SWEEP_BYTES = 8 + 8 + 1;
    /** Bytes of a GC_SWEPT body. */
    public static final int SWEPT_BYTES = 8 + 1 + 10 * 8;

    private GcSweepFrames() {
    }

    static boolean isGcSweep(MessageType type) {
        return type.code() >= MessageType.GC_SWEEP.code() && type.code() <= MessageType.GC_SWEEP_FAILED.code();
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case GC_SWEEP -> SWEEP_BYTES;
            case GC_SWEPT -> SWEPT_BYTES;
            case GC_SWEEP_FAILED -> 8 + 1 + 2 + ProtocolLimits.MAX_ERROR_MESSAGE;
            default -> throw new IllegalArgumentException(type + " is not a GC sweep frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof GcSweep) {
            return SWEEP_BYTES;
        } else if (m instanceof GcSwept) {
            return SWEPT_BYTES;
        } else if (m instanceof GcSweepFailed f) {
            return 8 + 1 + 2 + ByteBufUtil.utf8Bytes(f.message());
        }
        throw new IllegalArgumentException(m.type() + " is not a GC sweep frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof GcSweep s) {
            out.writeLong(s.requestId()).writeLong(s.now()).writeByte(s.flags());
        } else if (m instanceof GcSwept s) {
            out.writeLong(s.requestId()).writeByte(s.flags()).writeLong(s.horizon()).writeLong(s.chunksVisited())
                    .writeLong(s.chunksSkipped()).writeLong(s.blocksFreed()).writeLong(s.reclaimable()).writeLong(s.keptReferenced())
                    .writeLong(s.keptUnexpired()).writeLong(s.keptPinned()).writeLong(s.bytesFreed()).writeLong(s.millis());
        } else if (m instanceof GcSweepFailed f) {
            out.writeLong(f.requestId()).writeByte(f.reason());
            FrameEncoder.writeStr(out, f.message());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a GC sweep frame");
        }
    }

    /** Parses a GC sweep frame's body; bad values are BAD_FRAME, a long message LIMIT_EXCEEDED. */
    static Message parseBody(MessageType type, ByteBuf b) {
        long requestId = BodyFields.u64(b, "requestId");
        return switch (type) {
            case GC_SWEEP -> {
                long now = BodyFields.u64(b, "now");
                int flags = BodyFields.u8(b, "flags");
                yield new GcSweep(requestId, now, checked(type, GcSweep.problem(now, flags), flags));
            }
            case GC_SWEPT -> {
                int flags = BodyFields.u8(b, "flags");
                long[] f = new long[10];
                String[] names = {"horizon", "chunksVisited", "chunksSkipped", "blocksFreed", "reclaimable", "keptReferenced",
                    "keptUnexpired", "keptPinned", "bytesFreed", "millis"};
                for (int i = 0; i < f.length; i++) {
                    f[i] = BodyFields.u64(b, names[i]);
                }
                checked(type, GcSwept.problem(flags, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]), flags);
                yield new GcSwept(requestId, flags, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]);
            }
            case GC_SWEEP_FAILED -> {
                int reason = BodyFields.u8(b, "reason");
                checked(type, GcSweepFailed.problem(reason), reason);
                yield new GcSweepFailed(requestId, reason, BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE));
            }
            default -> throw new IllegalArgumentException(type + " is not a GC sweep frame");
        };
    }

    /** {@code value}, unless {@code problem} names what is wrong with the frame (BAD_FRAME). */
    private static int checked(MessageType type, String problem, int value) {
        if (problem != null) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, type + " " + problem);
        }
        return value;
    }
}
