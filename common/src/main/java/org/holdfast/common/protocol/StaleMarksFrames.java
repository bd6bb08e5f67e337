package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/**
 * Body layout of the stale marks frames on the worker link (cluster version 8,
 * {@link Register#STALE_MARKS_VERSION}). All integers big-endian.
 *
 * <pre>
 *  STALE_MARKS       | partId:u64 | count:u32 | count x ( pbn:u64 | fp:32 ) |   12 + 40 count
 *  STALE_MARKS_TAKEN | partId:u64 | status:u8 | message:str |                   11 + m
 * </pre>
 *
 * count 1 to {@link ProtocolLimits#MAX_DEDUP_ENTRIES}, every PBN above 0, status 0 to 2. Anything else is BAD_FRAME.
 */
public final class StaleMarksFrames {
    private static final int MAX = ProtocolLimits.MAX_DEDUP_ENTRIES;

    private StaleMarksFrames() {
    }

    static boolean isStaleMarks(MessageType type) {
        return type == MessageType.STALE_MARKS || type == MessageType.STALE_MARKS_TAKEN;
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case STALE_MARKS -> 8 + 4 + MAX * 40;
            case STALE_MARKS_TAKEN -> 8 + 1 + 2 + ProtocolLimits.MAX_ERROR_MESSAGE;
            default -> throw new IllegalArgumentException(type + " is not a stale marks frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof StaleMarks s) {
            return 8 + 4 + 40L * s.count();
        } else if (m instanceof StaleMarksTaken t) {
            return 8 + 1 + 2 + ByteBufUtil.utf8Bytes(t.message());
        }
        throw new IllegalArgumentException(m.type() + " is not a stale marks frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof StaleMarks s) {
            out.writeLong(s.partId()).writeInt(s.count());
            for (int i = 0; i < s.count(); i++) {
                out.writeLong(s.pbns()[i]).writeBytes(s.fps(), i * 32, 32);
            }
        } else if (m instanceof StaleMarksTaken t) {
            out.writeLong(t.partId()).writeByte(t.status());
            FrameEncoder.writeStr(out, t.message());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a stale marks frame");
        }
    }

    /** Parses a stale marks frame's body; bad values are BAD_FRAME. */
    static Message parseBody(MessageType type, ByteBuf b) {
        long partId = BodyFields.u64(b, "partId");
        if (type == MessageType.STALE_MARKS) {
            int n = BodyFields.count(b, MAX, "STALE_MARKS count", 1);
            BodyFields.need(b, n * 40, "marks");
            long[] pbns = new long[n];
            byte[] fps = new byte[n * 32];
            for (int i = 0; i < n; i++) {
                pbns[i] = b.readLong();
                if (pbns[i] <= 0) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "STALE_MARKS PBN " + Long.toUnsignedString(pbns[i]) + " at mark " + i
                            + " is not a stored block's (above 0, below 2^63)");
                }
                b.readBytes(fps, i * 32, 32);
            }
            return new StaleMarks(partId, n, pbns, fps);
        }
        int status = BodyFields.u8(b, "status");
        String message = BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE);
        if (status > StaleMarksTaken.REFUSED) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "STALE_MARKS_TAKEN status " + status + " is unknown (0 taken, 1 later, 2 refused)");
        }
        return new StaleMarksTaken(partId, status, message);
    }
}
