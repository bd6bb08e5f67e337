package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * Body layout of the sealed-log report frames on the worker link (cluster version 8,
 * {@link Register#SYNC_REPORT_VERSION}), and of the report itself, which DATA_SYNCED carries too
 * (cluster version 7). All integers big-endian.
 *
 * <pre>
 *  SEALED_LOGS          | requestId:u64 | report |                                 8 + 13 + 60n + 4d bytes
 *  SEALED_LOGS_RECORDED | requestId:u64 |                                          8 bytes
 *  report               | full:u8 | unhashed:u32 | n:u32 | n x ( logId:u32 | epoch:u64 | logEpoch:u64 | size:u64 | sha256:32 ) |
 *                         d:u32 | d x logId:u32 |
 * </pre>
 *
 * full 0 or 1, n and d at most {@link SealedLogReport#MAX_LOGS} (over it: LIMIT_EXCEEDED), d 0 in a
 * full report, log ids above 0 and below 2^31, epoch above 0; anything else is BAD_FRAME.
 */
public final class SealedLogsFrames {
    /** The most bytes a report takes. */
    static final int MAX_REPORT_BYTES = 1 + 4 + 4 + SealedLogReport.MAX_LOGS * SealedLogReport.SEALED_BYTES + 4 + SealedLogReport.MAX_LOGS * 4;

    private SealedLogsFrames() {
    }

    static boolean isSealedLogs(MessageType type) {
        return type == MessageType.SEALED_LOGS || type == MessageType.SEALED_LOGS_RECORDED;
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case SEALED_LOGS -> 8 + MAX_REPORT_BYTES;
            case SEALED_LOGS_RECORDED -> 8;
            default -> throw new IllegalArgumentException(type + " is not a sealed-log report frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof SealedLogsPush p) {
            return 8 + p.report().bodyBytes();
        } else if (m instanceof SealedLogsRecorded) {
            return 8;
        }
        throw new IllegalArgumentException(m.type() + " is not a sealed-log report frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof SealedLogsPush p) {
            out.writeLong(p.requestId());
            writeReport(p.report(), out);
        } else if (m instanceof SealedLogsRecorded r) {
            out.writeLong(r.requestId());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a sealed-log report frame");
        }
    }

    static Message parseBody(MessageType type, ByteBuf b) {
        long requestId = BodyFields.u64(b, "requestId");
        return type == MessageType.SEALED_LOGS ? new SealedLogsPush(requestId, parseReport(b, "SEALED_LOGS"))
                : new SealedLogsRecorded(requestId);
    }

    /** Writes report {@code r}. */
    static void writeReport(SealedLogReport r, ByteBuf out) {
        out.writeByte(r.full() ? 1 : 0).writeInt((int) r.unhashed()).writeInt(r.sealed().size());
        for (SealedLogReport.Sealed l : r.sealed()) {
            TakeoverRecordsFrames.writeSealed(l, out);
        }
        out.writeInt(r.dropped().size());
        for (int id : r.dropped()) {
            out.writeInt(id);
        }
    }

    /** Reads a report carried by a {@code frame} frame; counts over the limit are LIMIT_EXCEEDED, bad values BAD_FRAME. */
    static SealedLogReport parseReport(ByteBuf b, String frame) {
        int full = BodyFields.u8(b, "full");
        if (full > 1) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, frame + " report full " + full + " is not 0 or 1");
        }
        long unhashed = BodyFields.u32(b, "unhashed");
        int count = BodyFields.count(b, SealedLogReport.MAX_LOGS, frame + " sealed-log count", 0);
        BodyFields.need(b, count * SealedLogReport.SEALED_BYTES, "sealed logs");
        List<SealedLogReport.Sealed> sealed = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            sealed.add(TakeoverRecordsFrames.readSealed(b, frame, i));
        }
        int dropped = BodyFields.count(b, SealedLogReport.MAX_LOGS, frame + " dropped count", 0);
        if (full == 1 && dropped > 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, frame + " full report drops " + dropped + " ids: a full report drops none");
        }
        BodyFields.need(b, dropped * 4, "dropped ids");
        List<Integer> ids = new ArrayList<>(dropped);
        for (int i = 0; i < dropped; i++) {
            long id = BodyFields.u32(b, "dropped logId");
            if (id < 1 || id > Integer.MAX_VALUE) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, frame + " dropped log id " + id + " is out of range");
            }
            ids.add((int) id);
        }
        return new SealedLogReport(full == 1, sealed, ids, unhashed);
    }
}
