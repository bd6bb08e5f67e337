package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.MessageToByteEncoder;
import java.util.List;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.model.Consistency;

/**
 * Writes {@link Message}s as protocol frames (layout in {@link FrameDecoder}). Each frame's
 * buffer is allocated at its exact size, except a BLOCKS message that already holds its whole
 * frame ({@link Blocks#isFramed()}): its own buffer goes out as it is. A message whose frame would exceed
 * {@link ProtocolLimits#MAX_FRAME} fails the write with a {@link ProtocolException}
 * ({@code LIMIT_EXCEEDED}); senders split BLOCKS and RESTORE_DATA with their builders'
 * {@code fits}. Reference-counted messages are released after encoding (by
 * {@link MessageToByteEncoder}). Stateless and sharable.
 */
@Sharable
public final class FrameEncoder extends MessageToByteEncoder<Message> {

    public FrameEncoder() {
        super(Message.class, true);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof Blocks b && b.isFramed()) {
            // the builder laid the whole frame out in the message's buffer: send that buffer (the
            // channel releases it), not a copy of every payload in a new one
            ctx.write(b.data(), promise);
            return;
        }
        super.write(ctx, msg, promise);
    }

    @Override
    protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, Message msg, boolean preferDirect) {
        int size;
        try {
            size = frameBytes(msg);
        } catch (ProtocolException e) {
            // MessageToByteEncoder releases the message only if encode() runs; it will not now.
            io.netty.util.ReferenceCountUtil.release(msg);
            throw e;
        }
        return preferDirect ? ctx.alloc().ioBuffer(size, size) : ctx.alloc().heapBuffer(size, size);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Message msg, ByteBuf out) {
        write(msg, out);
    }

    /** Size of the whole frame, length field included; throws LIMIT_EXCEEDED if it is over MAX_FRAME. */
    public static int frameBytes(Message m) {
        long body = bodyBytes(m);
        if (body > ProtocolLimits.MAX_BODY) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED,
                    m.type() + " body of " + body + " bytes is over the frame limit " + ProtocolLimits.MAX_BODY);
        }
        return (int) (ProtocolLimits.LENGTH_FIELD_BYTES + ProtocolLimits.HEADER_BYTES + body);
    }

    /** Size of the body (after version and type) of {@code m}'s frame. */
    public static long bodyBytes(Message m) {
        switch (m.type()) {
            case HELLO: {
                Hello h = (Hello) m;
                return 4 + 2 + str(h.agentName()) + str(h.token());
            }
            case HELLO_OK:
                return 2 + str(((HelloOk) m).serverVersion()) + 4;
            case ERROR:
                return 2 + str(((ErrorMessage) m).message());
            case BACKUP_BEGIN:
                return str(((BackupBegin) m).volume()) + ((BackupBegin) m).fixedBytes();
            case BACKUP_READY:
                return ((BackupReady) m).bodyBytes();
            case ENTRIES:
                return 8 + 4 + (long) ((Entries) m).count() * Entries.ENTRY_BYTES;
            case NEED:
                return 8 + 4 + ((Need) m).bitmap().length;
            case BLOCKS:
                return ((Blocks) m).bodyBytes();
            case COMMIT:
                return ((Commit) m).bodyBytes();
            case COMMITTED:
                return ((Committed) m).bodyBytes();
            case ABORT:
                return 0;
            case LIST_SNAPSHOTS:
                return str(((ListSnapshots) m).volume());
            case SNAPSHOT_LIST:
                return 4 + (long) ((SnapshotList) m).snapshots().size() * SnapshotInfo.WIRE_BYTES;
            case RESTORE:
                return str(((Restore) m).volume()) + 8 + 8;
            case RESTORE_INFO:
                return 8 + 8 + 4 + 8;
            case RESTORE_DATA:
                return ((RestoreData) m).bodyBytes();
            case RESTORE_END:
                return 8;
            case RUN_REPORT: {
                RunReport r = (RunReport) m;
                return RunReport.FIXED_BYTES - 3 * 2 + str(r.volume()) + str(r.trigger()) + str(r.message());
            }
            case RUN_RECORDED:
                return 0;
            case GC_PROTECT, GC_PROTECTED, GC_GUARD_FAILED, GC_SESSION_END:
                return GcGuardFrames.bodyBytes(m);
            case REGISTER, REGISTERED, HEARTBEAT, HEARTBEAT_ACK,
                    DEDUP_LOOKUP, DEDUP_ANSWER, DEDUP_RECORD, DEDUP_FORGET, DEDUP_CONTROL, DEDUP_DONE, DEDUP_FAILED,
                    DEDUP_PROBE, DEDUP_CANDIDATES,
                    DATA_STORE, DATA_STORED, DATA_SYNC, DATA_SYNCED, DATA_READ, DATA_READ_ANSWER, DATA_FAILED,
                    GC_DELTA, GC_DELTA_APPLIED, GC_DELTA_FAILED,
                    GC_SWEEP, GC_SWEPT, GC_SWEEP_FAILED, DATA_REPAIR, COUNTS_CHECK, COUNTS_CHECKED,
                    TAKEOVER_RECORDS, TAKEOVER_RECORDS_PART, SEALED_LOGS, SEALED_LOGS_RECORDED,
                    STALE_MARKS, STALE_MARKS_TAKEN:
                return ClusterFrames.bodyBytes(m);
            default:
                throw new IllegalArgumentException("no encoding for " + m.type());
        }
    }

    private static int str(String s) {
        return 2 + ByteBufUtil.utf8Bytes(s);
    }

    /** Writes {@code m}'s whole frame (length field first) at {@code out}'s writer index. */
    public static void write(Message m, ByteBuf out) {
        int frame = frameBytes(m);
        out.ensureWritable(frame);
        out.writeInt(frame - ProtocolLimits.LENGTH_FIELD_BYTES);
        out.writeByte(ProtocolLimits.VERSION);
        out.writeByte(m.type().code());
        switch (m.type()) {
            case HELLO -> {
                Hello h = (Hello) m;
                out.writeInt(ProtocolLimits.MAGIC);
                out.writeShort(h.protocolVersion());
                writeStr(out, h.agentName());
                writeStr(out, h.token());
            }
            case HELLO_OK -> {
                HelloOk h = (HelloOk) m;
                out.writeShort(h.protocolVersion());
                writeStr(out, h.serverVersion());
                out.writeInt(h.maxFrame());
            }
            case ERROR -> {
                ErrorMessage e = (ErrorMessage) m;
                out.writeShort(e.code().code());
                writeStr(out, e.message());
            }
            case BACKUP_BEGIN -> {
                BackupBegin b = (BackupBegin) m;
                writeStr(out, b.volume());
                out.writeInt(b.blockSize());
                out.writeLong(b.volumeBytes());
                out.writeLong(b.baseSequence());
                if (b.baseSnapshotId() != 0) {
                    out.writeLong(b.baseSnapshotId());
                }
            }
            case BACKUP_READY -> {
                BackupReady r = (BackupReady) m;
                out.writeLong(r.sessionId());
                out.writeLong(r.parentSequence());
                out.writeInt(r.blockSize());
                out.writeByte(r.mode().code());
                out.writeBytes(r.possessionSecret());
                if (r.fullReason() != FullReason.UNSTATED) {
                    out.writeByte(r.fullReason().code());
                }
            }
            case ENTRIES -> {
                Entries e = (Entries) m;
                out.writeLong(e.startLbn());
                out.writeInt(e.count());
                out.writeBytes(e.fingerprints());
                long[] tags = e.tags();
                for (int i = 0; i < e.count(); i++) {
                    out.writeLong(tags[i]);
                }
            }
            case NEED -> {
                Need n = (Need) m;
                out.writeLong(n.startLbn());
                out.writeInt(n.count());
                out.writeBytes(n.bitmap());
            }
            case BLOCKS -> {
                Blocks b = (Blocks) m;
                out.writeInt(b.count());
                for (int i = 0; i < b.count(); i++) {
                    out.writeLong(b.lbns()[i]);
                    out.writeByte(b.codecs()[i]);
                    out.writeInt(b.lengths()[i]);
                    out.writeBytes(b.data(), b.offsets()[i], b.lengths()[i]);
                }
            }
            case COMMIT -> {
                Commit c = (Commit) m;
                out.writeLong(c.volumeBytes());
                if (c.consistency() != Consistency.UNKNOWN) {
                    out.writeByte(c.consistency().code());
                }
            }
            case COMMITTED -> {
                Committed c = (Committed) m;
                out.writeLong(c.sequence());
                out.writeLong(c.createdAtMillis());
                out.writeLong(c.logicalBytes());
                out.writeLong(c.changedBlocks());
                out.writeLong(c.sentBlocks());
                out.writeLong(c.newBlocks());
                out.writeLong(c.storedBytes());
                if (c.snapshotId() != 0) {
                    out.writeLong(c.snapshotId());
                }
            }
            case ABORT -> {
                // empty body
            }
            case LIST_SNAPSHOTS -> writeStr(out, ((ListSnapshots) m).volume());
            case SNAPSHOT_LIST -> {
                List<SnapshotInfo> list = ((SnapshotList) m).snapshots();
                out.writeInt(list.size());
                for (SnapshotInfo s : list) {
                    out.writeLong(s.sequence());
                    out.writeLong(s.createdAtMillis());
                    out.writeLong(s.volumeBytes());
                    out.writeInt(s.blockSize());
                    out.writeLong(s.logicalBytes());
                    out.writeLong(s.changedBlocks());
                    out.writeLong(s.storedBytes());
                }
            }
            case RESTORE -> {
                Restore r = (Restore) m;
                writeStr(out, r.volume());
                out.writeLong(r.sequence());
                out.writeLong(r.fromLbn());
            }
            case RESTORE_INFO -> {
                RestoreInfo r = (RestoreInfo) m;
                out.writeLong(r.sequence());
                out.writeLong(r.volumeBytes());
                out.writeInt(r.blockSize());
                out.writeLong(r.blockCount());
            }
            case RESTORE_DATA -> {
                RestoreData r = (RestoreData) m;
                out.writeLong(r.startLbn());
                out.writeInt(r.count());
                for (int i = 0; i < r.count(); i++) {
                    int codec = r.codecs()[i];
                    out.writeByte(codec);
                    if (codec == PayloadCodec.ZERO) {
                        continue;
                    }
                    out.writeBytes(r.fingerprints(), i * Fingerprint.BYTES, Fingerprint.BYTES);
                    if (codec == PayloadCodec.FRAME_MEMBER) {
                        out.writeShort(r.memberIndex(i));
                        out.writeShort(r.frameOrdinals()[i]);
                        continue;
                    }
                    if (codec == PayloadCodec.ZSTD_FRAME) {
                        out.writeShort(r.memberIndex(i));
                        out.writeShort(r.frameMemberCount(i));
                    }
                    out.writeInt(r.lengths()[i]);
                    out.writeBytes(r.data(), r.offsets()[i], r.lengths()[i]);
                }
            }
            case RESTORE_END -> out.writeLong(((RestoreEnd) m).blocksSent());
            case RUN_REPORT -> {
                RunReport r = (RunReport) m;
                writeStr(out, r.volume());
                writeStr(out, r.trigger());
                out.writeLong(r.startMillis());
                out.writeLong(r.endMillis());
                out.writeByte(r.result().code());
                out.writeByte(r.exitCode());
                out.writeShort(r.attempts());
                out.writeLong(r.bytesRead());
                out.writeLong(r.bytesSent());
                out.writeLong(r.snapshotSequence());
                out.writeByte(r.consistency().code());
                writeStr(out, r.message());
            }
            case RUN_RECORDED -> {
                // empty body
            }
            case GC_PROTECT, GC_PROTECTED, GC_GUARD_FAILED, GC_SESSION_END -> GcGuardFrames.writeBody(m, out);
            case REGISTER, REGISTERED, HEARTBEAT, HEARTBEAT_ACK,
                    DEDUP_LOOKUP, DEDUP_ANSWER, DEDUP_RECORD, DEDUP_FORGET, DEDUP_CONTROL, DEDUP_DONE, DEDUP_FAILED,
                    DEDUP_PROBE, DEDUP_CANDIDATES,
                    DATA_STORE, DATA_STORED, DATA_SYNC, DATA_SYNCED, DATA_READ, DATA_READ_ANSWER, DATA_FAILED,
                    GC_DELTA, GC_DELTA_APPLIED, GC_DELTA_FAILED,
                    GC_SWEEP, GC_SWEPT, GC_SWEEP_FAILED, DATA_REPAIR, COUNTS_CHECK, COUNTS_CHECKED,
                    TAKEOVER_RECORDS, TAKEOVER_RECORDS_PART, SEALED_LOGS, SEALED_LOGS_RECORDED,
                    STALE_MARKS, STALE_MARKS_TAKEN -> ClusterFrames.writeBody(m, out);
            default -> throw new IllegalArgumentException("no encoding for " + m.type());
        }
    }

    static void writeStr(ByteBuf out, String s) {
        int n = ByteBufUtil.utf8Bytes(s);
        out.writeShort(n);
        // reserve exactly: writeUtf8 alone reserves 3 bytes per char, which an exact-size buffer lacks
        ByteBufUtil.reserveAndWriteUtf8(out, s, n);
    }
}
