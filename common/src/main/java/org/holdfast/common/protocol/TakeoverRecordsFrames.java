package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.ArrayList;
import java.util.List;

/**
 * Body layout of the takeover records frames on the worker link (cluster version 7,
 * {@link Register#TAKEOVER_RECORDS_VERSION}), and of one sealed log as DATA_SYNCED's report carries it
 * too. All integers big-endian.
 *
 * <pre>
 *  TAKEOVER_RECORDS      | requestId:u64 | afterLogId:u32 |                                            12 bytes
 *  TAKEOVER_RECORDS_PART | requestId:u64 | status:u8 | complete:u8 | more:u8 | n:u32 |
 *                        | n x ( logId:u32 | epoch:u64 | logEpoch:u64 | size:u64 | sha256:32 ) | message:str |  17 + 60n + m
 * </pre>
 *
 * afterLogId below 2^31; status 0 to 2, complete and more 0 or 1, n at most
 * {@link TakeoverRecordsPart#MAX_LOGS} (0 unless status 0), log ids ascending above afterLogId, each
 * above 0 and below 2^31, epoch above 0, log epoch and size below 2^63. Anything else is BAD_FRAME.
 */
public final class TakeoverRecordsFrames {
    private static final int PART_FIXED_BYTES = 8 + 1 + 1 + 1 + 4 + 2;

    private TakeoverRecordsFrames() {
    }

    static boolean isTakeoverRecords(MessageType type) {
        return type == MessageType.TAKEOVER_RECORDS || type == MessageType.TAKEOVER_RECORDS_PART;
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case TAKEOVER_RECORDS -> 12;
            case TAKEOVER_RECORDS_PART -> PART_FIXED_BYTES + TakeoverRecordsPart.MAX_LOGS * SealedLogReport.SEALED_BYTES
                    + ProtocolLimits.MAX_ERROR_MESSAGE;
            default -> throw new IllegalArgumentException(type + " is not a takeover records frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof TakeoverRecords) {
            return 12;
        } else if (m instanceof TakeoverRecordsPart p) {
            return PART_FIXED_BYTES + (long) p.sealed().size() * SealedLogReport.SEALED_BYTES + ByteBufUtil.utf8Bytes(p.message());
        }
        throw new IllegalArgumentException(m.type() + " is not a takeover records frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof TakeoverRecords r) {
            out.writeLong(r.requestId()).writeInt(r.afterLogId());
        } else if (m instanceof TakeoverRecordsPart p) {
            out.writeLong(p.requestId()).writeByte(p.status()).writeByte(p.complete() ? 1 : 0).writeByte(p.more() ? 1 : 0)
                    .writeInt(p.sealed().size());
            for (SealedLogReport.Sealed l : p.sealed()) {
                writeSealed(l, out);
            }
            FrameEncoder.writeStr(out, p.message());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a takeover records frame");
        }
    }

    /** Parses a takeover records frame's body; bad values are BAD_FRAME. */
    static Message parseBody(MessageType type, ByteBuf b) {
        long requestId = BodyFields.u64(b, "requestId");
        if (type == MessageType.TAKEOVER_RECORDS) {
            long after = BodyFields.u32(b, "afterLogId");
            if (after > Integer.MAX_VALUE) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, type + " afterLogId " + after + " is not below 2^31");
            }
            return new TakeoverRecords(requestId, (int) after);
        }
        int status = BodyFields.u8(b, "status");
        int complete = BodyFields.u8(b, "complete");
        int more = BodyFields.u8(b, "more");
        int n = BodyFields.count(b, TakeoverRecordsPart.MAX_LOGS, type + " record count", 0);
        BodyFields.need(b, n * SealedLogReport.SEALED_BYTES, "sealed logs");
        List<SealedLogReport.Sealed> sealed = new ArrayList<>(n);
        int last = 0;
        for (int i = 0; i < n; i++) {
            SealedLogReport.Sealed l = readSealed(b, type.toString(), i);
            if (l.logId() <= last) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, type + " log ids are not ascending at record " + i);
            }
            last = l.logId();
            sealed.add(l);
        }
        String message = BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE);
        if (status > TakeoverRecordsPart.FAILED || complete > 1 || more > 1 || (status != TakeoverRecordsPart.RECORDS && (more == 1 || n > 0))) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, type + " status " + status + ", complete " + complete + ", more " + more
                    + " with " + n + " records is not a valid part");
        }
        return new TakeoverRecordsPart(requestId, status, complete == 1, more == 1, sealed, message);
    }

    /** Writes one sealed log (60 bytes). */
    static void writeSealed(SealedLogReport.Sealed l, ByteBuf out) {
        out.writeInt(l.logId()).writeLong(l.epoch()).writeLong(l.logEpoch()).writeLong(l.size()).writeBytes(l.sha256());
    }

    /** Reads one sealed log, record {@code i} of a {@code frame} frame; out of range is BAD_FRAME. */
    static SealedLogReport.Sealed readSealed(ByteBuf b, String frame, int i) {
        long id = BodyFields.u32(b, "logId");
        long epoch = BodyFields.u64(b, "epoch");
        long logEpoch = BodyFields.u64(b, "logEpoch");
        long size = BodyFields.u64(b, "size");
        byte[] sha = BodyFields.bytes(b, 32, "sha256");
        if (id < 1 || id > Integer.MAX_VALUE || epoch < 1 || logEpoch < 0 || size < 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, frame + " sealed log " + i + " (id " + id + ", epoch "
                    + Long.toUnsignedString(epoch) + ", log epoch " + Long.toUnsignedString(logEpoch) + ", size "
                    + Long.toUnsignedString(size) + ") is out of range");
        }
        return new SealedLogReport.Sealed((int) id, epoch, logEpoch, size, sha);
    }
}
