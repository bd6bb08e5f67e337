package org.holdfast.common.protocol;

import static org.holdfast.common.protocol.BodyFields.count;
import static org.holdfast.common.protocol.BodyFields.lbn;
import static org.holdfast.common.protocol.BodyFields.need;
import static org.holdfast.common.protocol.BodyFields.str;
import static org.holdfast.common.protocol.BodyFields.u16;
import static org.holdfast.common.protocol.BodyFields.u32;
import static org.holdfast.common.protocol.BodyFields.u64;
import static org.holdfast.common.protocol.BodyFields.u8;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.model.Consistency;

/**
 * Parses a message body by its type (docs/protocol.md, "Messages"): the agent messages here, the
 * BLOCKS and RESTORE_DATA payload tables in {@link BlockPayloadParser}, the cluster messages in
 * {@link ClusterFrames} and its siblings. One per connection: it knows the agreed protocol version.
 *
 * <pre>
 *  ENTRIES body       +--------------+----------+----------------------------+------------------+
 *                     | startLbn:u64 | count:u32| count x 32-byte fingerprint| count x u64 tag  |
 *                     +--------------+----------+----------------------------+------------------+
 *  BACKUP_READY body  | sessionId:u64 | parentSequence:u64 | blockSize:u32 | mode:u8 | 32-byte secret |
 *  protocol 5: BACKUP_BEGIN may end with baseSnapshotId:u64, COMMITTED with snapshotId:u64 (never 0; absent = unknown),
 *              BACKUP_READY (mode full) with fullReason:u8 (1 to 3; absent = not said)
 * </pre>
 *
 * <p>The snapshot ids of protocol 5 are refused unless {@link #protocolVersion(int)} was told a
 * version of at least 5. Every field is checked against the bytes left and its limit before
 * anything is allocated for it ({@link BodyFields}); the caller checks that the body was consumed
 * exactly.
 */
final class MessageParser {
    private final BlockPayloadParser payloads = new BlockPayloadParser();
    // the version agreed in HELLO / HELLO_OK (0: not yet): snapshot ids only from 5 on
    private int protocolVersion;

    /** The protocol version the connection agreed on: decides which optional fields and codecs are accepted. */
    void protocolVersion(int version) {
        this.protocolVersion = version;
        payloads.protocolVersion(version);
    }

    /** The session's block size (0: the absolute limits), which bounds BLOCKS and RESTORE_DATA payloads. */
    void blockSize(int blockSize) {
        payloads.blockSize(blockSize);
    }

    /** Largest body a frame of {@code type} can have; anything longer is refused before it is buffered. */
    static int maxBody(MessageType type) {
        return switch (type) {
            case HELLO -> 4 + 2 + 2 + ProtocolLimits.MAX_AGENT_NAME + 2 + ProtocolLimits.MAX_TOKEN;
            case HELLO_OK -> 2 + 2 + ProtocolLimits.MAX_SERVER_VERSION + 4;
            case ERROR -> 2 + 2 + ProtocolLimits.MAX_ERROR_MESSAGE;
            case BACKUP_BEGIN -> 2 + ProtocolLimits.MAX_VOLUME_NAME + 4 + 8 + 8 + 8;
            case BACKUP_READY -> 8 + 8 + 4 + 1 + BackupReady.SECRET_BYTES + 1;
            case ENTRIES -> 8 + 4 + ProtocolLimits.MAX_RUN_ENTRIES * Entries.ENTRY_BYTES;
            case NEED -> 8 + 4 + Need.bitmapBytes(ProtocolLimits.MAX_RUN_ENTRIES);
            case COMMIT -> 8 + 1;
            case RESTORE_END -> 8;
            case COMMITTED -> 8 * 8;
            case ABORT -> 0;
            case LIST_SNAPSHOTS -> 2 + ProtocolLimits.MAX_VOLUME_NAME;
            case SNAPSHOT_LIST -> 4 + ProtocolLimits.MAX_SNAPSHOT_LIST * SnapshotInfo.WIRE_BYTES;
            case RESTORE -> 2 + ProtocolLimits.MAX_VOLUME_NAME + 8 + 8;
            case RESTORE_INFO -> 8 + 8 + 4 + 8;
            case BLOCKS, RESTORE_DATA -> ProtocolLimits.MAX_BODY;
            case RUN_REPORT -> RunReport.FIXED_BYTES + ProtocolLimits.MAX_VOLUME_NAME + ProtocolLimits.MAX_RUN_TRIGGER
                    + ProtocolLimits.MAX_RUN_MESSAGE;
            case RUN_RECORDED -> 0;
            case GC_PROTECT, GC_PROTECTED, GC_GUARD_FAILED, GC_SESSION_END -> GcGuardFrames.maxBody(type);
            case REGISTER, REGISTERED, HEARTBEAT, HEARTBEAT_ACK,
                    DEDUP_LOOKUP, DEDUP_ANSWER, DEDUP_RECORD, DEDUP_FORGET, DEDUP_CONTROL, DEDUP_DONE, DEDUP_FAILED,
                    DEDUP_PROBE, DEDUP_CANDIDATES,
                    DATA_STORE, DATA_STORED, DATA_SYNC, DATA_SYNCED, DATA_READ, DATA_READ_ANSWER, DATA_FAILED,
                    GC_DELTA, GC_DELTA_APPLIED, GC_DELTA_FAILED,
                    GC_SWEEP, GC_SWEPT, GC_SWEEP_FAILED, DATA_REPAIR, COUNTS_CHECK, COUNTS_CHECKED,
                    TAKEOVER_RECORDS, TAKEOVER_RECORDS_PART, SEALED_LOGS, SEALED_LOGS_RECORDED,
                    STALE_MARKS, STALE_MARKS_TAKEN -> ClusterFrames.maxBody(type);
        };
    }

    /** Parses {@code b}, the whole body of a {@code type} frame, leaving unread whatever the message does not use. */
    Message parse(MessageType type, ByteBuf b) {
        switch (type) {
            case HELLO: {
                long magic = u32(b, "magic");
                if (magic != (ProtocolLimits.MAGIC & 0xffffffffL)) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, String.format("bad HELLO magic 0x%08x", magic));
                }
                int version = u16(b, "protocolVersion");
                String name = str(b, "agentName", ProtocolLimits.MAX_AGENT_NAME);
                String token = str(b, "token", ProtocolLimits.MAX_TOKEN);
                return new Hello(version, name, token);
            }
            case HELLO_OK:
                return new HelloOk(u16(b, "protocolVersion"), str(b, "serverVersion", ProtocolLimits.MAX_SERVER_VERSION),
                        (int) u32(b, "maxFrame"));
            case ERROR: {
                int code = u16(b, "code");
                ErrorCode ec = ErrorCode.fromCode(code);
                String msg = str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE);
                // A code from a newer peer is still an error; keep its number in the text.
                return ec != null ? new ErrorMessage(ec, msg)
                        : ErrorMessage.of(ErrorCode.INTERNAL, "error code " + code + ": " + msg);
            }
            case BACKUP_BEGIN: {
                String volume = str(b, "volume", ProtocolLimits.MAX_VOLUME_NAME);
                int blockSize = (int) u32(b, "blockSize");
                long volumeBytes = u64(b, "volumeBytes");
                long baseSequence = u64(b, "baseSequence");
                return new BackupBegin(volume, blockSize, volumeBytes, baseSequence, snapshotId(b, "BACKUP_BEGIN baseSnapshotId"));
            }
            case BACKUP_READY: {
                long session = u64(b, "sessionId");
                long parent = u64(b, "parentSequence");
                int bs = (int) u32(b, "blockSize");
                int modeCode = u8(b, "mode");
                BackupMode mode = BackupMode.fromCode(modeCode);
                if (mode == null) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "unknown backup mode " + modeCode);
                }
                need(b, BackupReady.SECRET_BYTES, "possessionSecret");
                byte[] secret = new byte[BackupReady.SECRET_BYTES];
                b.readBytes(secret);
                return new BackupReady(session, parent, bs, mode, secret, fullReason(b, mode));
            }
            case ENTRIES: {
                long startLbn = lbn(b, "startLbn");
                int count = count(b, ProtocolLimits.MAX_RUN_ENTRIES, "ENTRIES count", 1);
                need(b, count * Entries.ENTRY_BYTES, "fingerprints and possession tags");
                byte[] fps = new byte[count * Fingerprint.BYTES];
                b.readBytes(fps);
                long[] tags = new long[count];
                for (int i = 0; i < count; i++) {
                    tags[i] = b.readLong();
                }
                return new Entries(startLbn, count, fps, tags);
            }
            case NEED: {
                long startLbn = lbn(b, "startLbn");
                int count = count(b, ProtocolLimits.MAX_RUN_ENTRIES, "NEED count", 1);
                need(b, Need.bitmapBytes(count), "bitmap");
                byte[] bitmap = new byte[Need.bitmapBytes(count)];
                b.readBytes(bitmap);
                if (count % 8 != 0 && (bitmap[bitmap.length - 1] & 0xff) >>> (count % 8) != 0) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "NEED bitmap has bits set beyond count " + count);
                }
                return new Need(startLbn, count, bitmap);
            }
            case BLOCKS:
                return payloads.parseBlocks(b);
            case COMMIT:
                return parseCommit(b);
            case COMMITTED:
                return new Committed(u64(b, "sequence"), u64(b, "createdAtMillis"), u64(b, "logicalBytes"),
                        u64(b, "changedBlocks"), u64(b, "sentBlocks"), u64(b, "newBlocks"), u64(b, "storedBytes"),
                        snapshotId(b, "COMMITTED snapshotId"));
            case ABORT:
                return Abort.INSTANCE;
            case LIST_SNAPSHOTS:
                return new ListSnapshots(str(b, "volume", ProtocolLimits.MAX_VOLUME_NAME));
            case SNAPSHOT_LIST: {
                int n = count(b, ProtocolLimits.MAX_SNAPSHOT_LIST, "SNAPSHOT_LIST count", 0);
                need(b, n * SnapshotInfo.WIRE_BYTES, "snapshots");
                List<SnapshotInfo> list = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    list.add(new SnapshotInfo(b.readLong(), b.readLong(), b.readLong(), b.readInt(), b.readLong(),
                            b.readLong(), b.readLong()));
                }
                return new SnapshotList(list);
            }
            case RESTORE:
                return new Restore(str(b, "volume", ProtocolLimits.MAX_VOLUME_NAME), u64(b, "sequence"), lbn(b, "fromLbn"));
            case RESTORE_INFO:
                return new RestoreInfo(u64(b, "sequence"), u64(b, "volumeBytes"), (int) u32(b, "blockSize"),
                        u64(b, "blockCount"));
            case RESTORE_DATA:
                return payloads.parseRestoreData(b);
            case RESTORE_END:
                return new RestoreEnd(u64(b, "blocksSent"));
            case RUN_REPORT:
                return parseRunReport(b);
            case RUN_RECORDED:
                return RunRecorded.INSTANCE;
            case GC_PROTECT, GC_PROTECTED, GC_GUARD_FAILED, GC_SESSION_END:
                return GcGuardFrames.parseBody(type, b);
            case REGISTER, REGISTERED, HEARTBEAT, HEARTBEAT_ACK,
                    DEDUP_LOOKUP, DEDUP_ANSWER, DEDUP_RECORD, DEDUP_FORGET, DEDUP_CONTROL, DEDUP_DONE, DEDUP_FAILED,
                    DEDUP_PROBE, DEDUP_CANDIDATES,
                    DATA_STORE, DATA_STORED, DATA_SYNC, DATA_SYNCED, DATA_READ, DATA_READ_ANSWER, DATA_FAILED,
                    GC_DELTA, GC_DELTA_APPLIED, GC_DELTA_FAILED,
                    GC_SWEEP, GC_SWEPT, GC_SWEEP_FAILED, DATA_REPAIR, COUNTS_CHECK, COUNTS_CHECKED,
                    TAKEOVER_RECORDS, TAKEOVER_RECORDS_PART, SEALED_LOGS, SEALED_LOGS_RECORDED,
                    STALE_MARKS, STALE_MARKS_TAKEN:
                return ClusterFrames.parseBody(type, b);
            default:
                throw new ProtocolException(ErrorCode.BAD_FRAME, "no decoding for " + type);
        }
    }

    /**
     * The optional snapshot identity that ends BACKUP_BEGIN and COMMITTED: absent = 0 (unknown).
     * Present only on a connection that agreed on version 5 or more, and never 0 (a sender leaves
     * an unknown id out): an older peer would refuse the trailing bytes, so accepting them here
     * would hide a sender that did not check the agreed version.
     */
    private long snapshotId(ByteBuf b, String field) {
        if (!b.isReadable()) {
            return 0;
        }
        requireVersion5(field);
        long id = u64(b, field);
        if (id == 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, field + " is 0; leave the field out when the identity is unknown");
        }
        return id;
    }

    /**
     * BACKUP_READY's optional u8 full reason (protocol 5): absent = not said. Present only on a
     * connection that agreed on 5 or more, only with mode full, and only 1 to 3 (a sender leaves an
     * unstated reason out).
     */
    private FullReason fullReason(ByteBuf b, BackupMode mode) {
        if (!b.isReadable()) {
            return FullReason.UNSTATED;
        }
        requireVersion5("BACKUP_READY fullReason");
        int code = u8(b, "fullReason");
        FullReason reason = FullReason.fromWire(code);
        if (reason == null || mode != BackupMode.FULL) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "BACKUP_READY fullReason " + code
                    + (reason == null ? " is not 1 to 3" : " with mode " + mode));
        }
        return reason;
    }

    /** Refuses a trailing field of protocol 5 on a connection that agreed on less. */
    private void requireVersion5(String field) {
        if (protocolVersion < BackupBegin.SNAPSHOT_ID_SINCE_VERSION) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, field + " needs protocol version "
                    + BackupBegin.SNAPSHOT_ID_SINCE_VERSION + "; this connection agreed on version " + protocolVersion);
        }
    }

    /** COMMIT: 8 bytes (version 2, consistency unknown) or 9 (version 3: a u8 consistency, 1 or 2). */
    private static Commit parseCommit(ByteBuf b) {
        long volumeBytes = u64(b, "volumeBytes");
        if (!b.isReadable()) {
            return new Commit(volumeBytes);
        }
        int code = u8(b, "consistency");
        Consistency c = Consistency.fromCode(code);
        if (c == null || c == Consistency.UNKNOWN) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "COMMIT consistency " + code
                    + " is not 1 (crash) or 2 (application); leave the byte out when unknown");
        }
        return new Commit(volumeBytes, c);
    }

    private static RunReport parseRunReport(ByteBuf b) {
        String volume = str(b, "volume", ProtocolLimits.MAX_VOLUME_NAME);
        String trigger = str(b, "trigger", ProtocolLimits.MAX_RUN_TRIGGER);
        long start = u64(b, "startMillis");
        long end = u64(b, "endMillis");
        int resultCode = u8(b, "result");
        RunReport.Result result = RunReport.Result.fromCode(resultCode);
        if (result == null) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "unknown RUN_REPORT result " + resultCode);
        }
        int exit = u8(b, "exitCode");
        int attempts = u16(b, "attempts");
        long read = u64(b, "bytesRead");
        long sent = u64(b, "bytesSent");
        long snapshot = u64(b, "snapshotSequence");
        int consistencyCode = u8(b, "consistency");
        Consistency consistency = Consistency.fromCode(consistencyCode);
        if (consistency == null) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "unknown RUN_REPORT consistency " + consistencyCode);
        }
        if (start < 0 || end < 0 || read < 0 || sent < 0 || snapshot < 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "RUN_REPORT times, byte counts and snapshot must be below 2^63");
        }
        String message = str(b, "message", ProtocolLimits.MAX_RUN_MESSAGE);
        return new RunReport(volume, trigger, start, end, result, exit, attempts, read, sent, snapshot, consistency, message);
    }
}
