package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * Body layout of the grace protection frames on the worker link (distributed GC: the worker that
 * owns a PBN protects it for a backup in progress). The master's requests carry a request id the
 * worker's answer repeats, as the data frames do. All integers big-endian; every count is checked
 * against its limit before anything is read, and every body has exactly the bytes its count names.
 *
 * <pre>
 *  GC_PROTECT      | requestId:u64 | sessionId:u64 | mode:u8 | count:u32 | pbns:count*u64 |   21 + 8 * count bytes
 *  GC_PROTECTED    | requestId:u64 | refused:u32 | entries:refused*u32 |                     12 + 4 * refused bytes
 *  GC_GUARD_FAILED | requestId:u64 | message:str |                                          10 + n bytes
 *  GC_SESSION_END  | sessionId:u64 |                                                        8 bytes
 * </pre>
 *
 * mode 0 (strict) or 1 (zero refused); count 1..{@link ProtocolLimits#MAX_GC_PROTECT_PBNS} (over:
 * LIMIT_EXCEEDED, 0: BAD_FRAME); every PBN at least 1; refused 0..the same limit, its entries
 * increasing and below the limit. Anything else is BAD_FRAME.
 */
public final class GcGuardFrames {
    private static final int PROTECT_HEADER = 8 + 8 + 1 + 4;

    private GcGuardFrames() {
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case GC_PROTECT -> PROTECT_HEADER + ProtocolLimits.MAX_GC_PROTECT_PBNS * 8;
            case GC_PROTECTED -> 8 + 4 + ProtocolLimits.MAX_GC_PROTECT_PBNS * 4;
            case GC_GUARD_FAILED -> 8 + 2 + ProtocolLimits.MAX_ERROR_MESSAGE;
            case GC_SESSION_END -> 8;
            default -> throw new IllegalArgumentException(type + " is not a GC guard frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof GcProtect p) {
            return PROTECT_HEADER + 8L * p.count();
        } else if (m instanceof GcProtected p) {
            return 8 + 4 + 4L * p.refused().length;
        } else if (m instanceof GcGuardFailed f) {
            return 8 + 2 + ByteBufUtil.utf8Bytes(f.message());
        } else if (m instanceof GcSessionEnd) {
            return 8;
        }
        throw new IllegalArgumentException(m.type() + " is not a GC guard frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof GcProtect p) {
            out.writeLong(p.requestId()).writeLong(p.sessionId()).writeByte(p.zeroRefused() ? GcProtect.ZERO_REFUSED : GcProtect.STRICT)
                    .writeInt(p.count());
            // one bulk write: a call per field on a leak-tracked buffer (tests run paranoid) costs a stack trace each
            ByteBuffer pbns = ByteBuffer.allocate(p.count() * 8);
            pbns.asLongBuffer().put(p.pbns(), 0, p.count());
            out.writeBytes(pbns.array());
        } else if (m instanceof GcProtected p) {
            out.writeLong(p.requestId()).writeInt(p.refused().length);
            ByteBuffer entries = ByteBuffer.allocate(p.refused().length * 4);
            entries.asIntBuffer().put(p.refused());
            out.writeBytes(entries.array());
        } else if (m instanceof GcGuardFailed f) {
            out.writeLong(f.requestId());
            FrameEncoder.writeStr(out, f.message());
        } else if (m instanceof GcSessionEnd e) {
            out.writeLong(e.sessionId());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a GC guard frame");
        }
    }

    /** Parses a GC guard frame's body; a count over its limit is LIMIT_EXCEEDED, short bodies and bad values BAD_FRAME. */
    static Message parseBody(MessageType type, ByteBuf b) {
        return switch (type) {
            case GC_PROTECT -> {
                long requestId = BodyFields.u64(b, "requestId");
                long sessionId = BodyFields.u64(b, "sessionId");
                int mode = BodyFields.u8(b, "mode");
                if (mode != GcProtect.STRICT && mode != GcProtect.ZERO_REFUSED) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "GC_PROTECT mode " + mode + " is neither 0 (strict) nor 1 (zero refused)");
                }
                int count = BodyFields.count(b, ProtocolLimits.MAX_GC_PROTECT_PBNS, "GC_PROTECT count", 1);
                // the whole body first: a count the body cannot hold is refused before any array is sized by it
                ByteBuffer raw = ByteBuffer.wrap(BodyFields.bytes(b, count * 8, "pbns"));
                long[] pbns = new long[count];
                raw.asLongBuffer().get(pbns);
                for (int i = 0; i < count; i++) {
                    String bad = GcProtect.pbnProblem(i, pbns[i]);
                    if (bad != null) {
                        throw new ProtocolException(ErrorCode.BAD_FRAME, "GC_PROTECT " + bad);
                    }
                }
                yield new GcProtect(requestId, sessionId, mode == GcProtect.ZERO_REFUSED, count, pbns);
            }
            case GC_PROTECTED -> {
                long requestId = BodyFields.u64(b, "requestId");
                int n = BodyFields.count(b, ProtocolLimits.MAX_GC_PROTECT_PBNS, "GC_PROTECTED refused", 0);
                ByteBuffer raw = ByteBuffer.wrap(BodyFields.bytes(b, n * 4, "entries"));
                int[] refused = new int[n];
                raw.asIntBuffer().get(refused);
                String bad = GcProtected.problem(refused);
                if (bad != null) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "GC_PROTECTED " + bad);
                }
                yield new GcProtected(requestId, refused);
            }
            case GC_GUARD_FAILED -> new GcGuardFailed(BodyFields.u64(b, "requestId"),
                    BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE));
            case GC_SESSION_END -> new GcSessionEnd(BodyFields.u64(b, "sessionId"));
            default -> throw new IllegalArgumentException(type + " is not a GC guard frame");
        };
    }
}
