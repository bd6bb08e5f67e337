package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.model.Consistency;

/**
 * Turns the byte stream of a connection into {@link Message}s, refusing anything outside protocol v2.
 *
 * <pre>
 *  0               4            5           6
 *  +---------------+------------+-----------+------------------------------+
 *  | length : u32  | version:u8 | type : u8 | body : (length - 2) bytes    |
 *  +---------------+------------+-----------+------------------------------+
 *  |&lt;- not counted -&gt;|&lt;------------------- length ---------------------&gt;|
 *
 *  all integers big-endian; a string is  +------------+------------------+
 *                                        | len : u16  | len bytes UTF-8  |
 *                                        +------------+------------------+
 *  BLOCKS body        +--------+----------+----------+------------+---------------+-- ...
 *                     | n: u32 | lbn: u64 | codec:u8 | length:u32 | length bytes  |  n times
 *                     +--------+----------+----------+------------+---------------+-- ...
 *  ENTRIES body      +--------------+----------+---------------------------+------------------+
 *                     | startLbn:u64 | count:u32| count x 32-byte fingerprint| count x u64 tag  |
 *                     +--------------+----------+---------------------------+------------------+
 *  BACKUP_READY body  | sessionId:u64 | parentSequence:u64 | blockSize:u32 | mode:u8 | 32-byte secret |
 *                     (protocol 4: codec 3 = zstd frame, codec 4 = frame member with length 0)
 *  RESTORE_DATA body  +-------------+--------+----------+--------------+------------+--------+-- ...
 *                     | startLbn:u64| n: u32 | codec:u8 | fp: 32 bytes | length:u32 | bytes  |  n times;
 *                     +-------------+--------+----------+--------------+------------+--------+-- ...
 *                                               fp, length and bytes are absent when codec = 0 (zero block)
 *     protocol 4, codec 3 (zstd frame):   | codec | fp | member:u16 | members:u16 | length:u32 | bytes |
 *     protocol 4, codec 4 (frame member): | codec | fp | member:u16 | ordinal:u16 |
 *  protocol 5: BACKUP_BEGIN may end with baseSnapshotId:u64, COMMITTED with snapshotId:u64 (never 0; absent = unknown),
 *              BACKUP_READY (mode full) with fullReason:u8 (1 to 3; absent = not said)
 * </pre>
 *
 * <p>The frame codecs (3, 4) are refused unless {@link #protocolVersion(int)} was told a version of
 * at least 4: a connection that agreed on an older version never carries them. Likewise the snapshot
 * ids of protocol 5 are refused unless the agreed version is at least 5.
 *
 * <p>Checks, in order, each before anything is allocated for it: {@code length} against
 * {@link ProtocolLimits#MAX_FRAME} and against the largest body its type can have (so a tiny
 * message type cannot make us buffer 16 MiB), the version byte (as soon as it arrives), the type
 * byte, then once the frame is complete every string length, count and payload length against its
 * limit, and that the body is consumed exactly. Block payloads are checked against
 * {@link ProtocolLimits#MAX_PAYLOAD}, or exactly against the session's block size once the
 * handler calls {@link #blockSize(int)}.
 *
 * <p>A violation throws a {@link ProtocolException} carrying the {@link ErrorCode} to send back
 * (it reaches {@code exceptionCaught} unwrapped); after it the decoder discards all further input
 * until the channel closes, like Netty's {@code MqttDecoder}. Anything else going wrong while
 * parsing is reported as {@code BAD_FRAME}: no other exception type leaves this decoder.
 *
 * <p>{@link Blocks} and {@link RestoreData} are emitted holding a retained slice of the received
 * bytes; the handler that receives them releases them. Not sharable: one instance per channel.
 *
 * <p>Memory: without a {@link FrameBudget} a frame's claimed length is never allocated up front
 * (the cumulation grows as bytes arrive). With one the decoder reserves each frame's size once its
 * header is known, then grows the cumulation to exactly the whole frame (no more than it reserved),
 * and reads on only with the reservation ({@link #retry} after a refusal); with
 * {@link #limitBeforeHello} a peer whose HELLO has not been accepted may not send more than a few
 * KiB, so an unauthenticated connection can neither claim nor buffer a large frame.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    private boolean failed;
    private long discarded;
    private int blockSize;
    private boolean holdAfterHello;
    private boolean held;
    private FrameBudget budget = FrameBudget.UNLIMITED;
    // 0: no limit; else the most bytes buffered and the largest frame before resume()
    private int beforeHelloLimit;
    private boolean accepted;
    // the reservation of the frame at the reader index (0: none yet)
    private int reservedFrame;
    private boolean waitingForBudget;
    private int lastFrameBytes;
    private long frames;
    // the version agreed in HELLO / HELLO_OK (0: not yet): compressed frames only from 4 on
    private int protocolVersion;

    /**
     * Reserves every frame's bytes from {@code budget} before reading its body. Call before the
     * first read, from the channel's event loop.
     */
    public void budget(FrameBudget budget) {
        this.budget = budget;
    }

    /**
     * Until {@link #resume} (the HELLO accepted), refuses with {@code LIMIT_EXCEEDED} a frame whose
     * header claims more than {@code bytes}, or more than {@code bytes} buffered in all: a client
     * that has not authenticated cannot make the server hold more. Call before the first read.
     */
    public void limitBeforeHello(int bytes) {
        if (bytes < LENGTH_PLUS_MAX_HELLO) {
            throw new IllegalArgumentException("the limit before HELLO must hold a HELLO: at least " + LENGTH_PLUS_MAX_HELLO + " bytes");
        }
        this.beforeHelloLimit = bytes;
    }

    /** The largest HELLO frame, length field included. */
    public static final int LENGTH_PLUS_MAX_HELLO = ProtocolLimits.LENGTH_FIELD_BYTES + ProtocolLimits.HEADER_BYTES
            + 4 + 2 + 2 + ProtocolLimits.MAX_AGENT_NAME + 2 + ProtocolLimits.MAX_TOKEN;

    /**
     * Tries again to reserve the waiting frame (after the budget said there is room) and decodes
     * what is buffered. A no-op unless {@link #isWaitingForBudget}. Event loop only.
     */
    public void retry(ChannelHandlerContext ctx) {
        if (!waitingForBudget || failed) {
            return;
        }
        waitingForBudget = false;
        try {
            channelRead(ctx, io.netty.buffer.Unpooled.EMPTY_BUFFER);
        } catch (Exception e) {
            ctx.fireExceptionCaught(e);
        }
    }

    /**
     * True while the decoder wants no more input: a HELLO is held or the budget had no room. Netty's
     * {@code ByteToMessageDecoder} asks for another read after one that completed no frame even
     * with autoRead off; a handler in front of this one drops those requests while this is true.
     */
    public boolean wantsNoInput() {
        return !failed && (held || waitingForBudget); // discarding wants all input: it is drained, not buffered
    }

    /** True while a frame's header has arrived but the budget had no room for it: read nothing more. */
    public boolean isWaitingForBudget() {
        return waitingForBudget;
    }

    /** Wire bytes (length field included) of the frame last emitted: what its consumer must {@link FrameBudget#release}. */
    public int lastFrameBytes() {
        return lastFrameBytes;
    }

    /** Size (length field included) of the frame being received, 0 between frames. */
    public int partialFrameBytes() {
        return reservedFrame;
    }

    /** Frames emitted so far. */
    public long framesDecoded() {
        return frames;
    }

    /**
     * Decodes nothing after the first HELLO (or REGISTER, the cluster port's opening frame) until
     * {@link #resume}: bytes the peer sent behind it stay unparsed in the buffer until its token has
     * been checked. Call before the first read.
     */
    public void holdAfterHello() {
        this.holdAfterHello = true;
    }

    /**
     * Lets decoding go on after a held HELLO and decodes whatever arrived meanwhile. Call from the
     * channel's event loop with this decoder's context.
     */
    public void resume(ChannelHandlerContext ctx) {
        if (!held) {
            return;
        }
        held = false;
        holdAfterHello = false;
        accepted = true;
        try {
            channelRead(ctx, io.netty.buffer.Unpooled.EMPTY_BUFFER); // decodes the bytes already buffered
        } catch (Exception e) {
            ctx.fireExceptionCaught(e);
        }
    }

    /**
     * Tells the decoder the session's block size (after BACKUP_READY or RESTORE_INFO) so that raw
     * payloads must be exactly that long and zstd payloads at most {@code blockSize + 4 KiB}.
     * Call from the channel's event loop; 0 goes back to the absolute limits.
     */
    public void blockSize(int blockSize) {
        if (blockSize != 0 && !ProtocolLimits.isValidBlockSize(blockSize)) {
            throw new IllegalArgumentException("invalid block size " + blockSize);
        }
        this.blockSize = blockSize;
    }

    /**
     * Tells the decoder the protocol version the connection agreed on, which decides whether the
     * compressed-frame codecs of protocol 4 are accepted. Call from the channel's event loop before
     * any BLOCKS or RESTORE_DATA can arrive.
     */
    public void protocolVersion(int version) {
        this.protocolVersion = version;
    }

    /**
     * From now on discards all input until the channel closes, as after a violation: for a refusal
     * that did not come from this decoder ({@link ErrorLinger}). What is buffered is dropped, the
     * reservation of a partial frame is given back, a held HELLO is let go. Event loop only.
     */
    public void discardInput() {
        held = false;
        fail(internalBuffer());
    }

    /** Bytes read and dropped since input began to be discarded: {@link ErrorLinger} watches it to see the peer stop writing. */
    public long discardedBytes() {
        return discarded;
    }

    /** True after a violation: all input is being discarded. */
    public boolean isFailed() {
        return failed;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            discarded += in.readableBytes();
            in.skipBytes(in.readableBytes());
            return;
        }
        if (beforeHelloLimit > 0 && !accepted && in.readableBytes() > beforeHelloLimit) {
            fail(in);
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "more than " + beforeHelloLimit
                    + " bytes sent before the HELLO was accepted; send HELLO alone and wait for HELLO_OK");
        }
        if (held) {
            return; // consumes nothing: the decode loop stops until resume()
        }
        Message m;
        try {
            m = decodeFrame(in);
        } catch (ProtocolException e) {
            fail(in);
            throw e;
        } catch (RuntimeException e) {
            fail(in);
            throw new ProtocolException(ErrorCode.BAD_FRAME, "malformed frame: " + e, e);
        }
        if (m != null) {
            out.add(m);
            if (holdAfterHello && (m instanceof Hello || m instanceof Register)) {
                held = true;
            }
        }
    }

    private void fail(ByteBuf in) {
        failed = true;
        waitingForBudget = false;
        in.skipBytes(in.readableBytes());
        releaseReservation();
    }

    private void releaseReservation() {
        if (reservedFrame > 0) {
            int r = reservedFrame;
            reservedFrame = 0;
            budget.release(r);
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
        releaseReservation(); // a frame cut off by the close never reaches a consumer
        super.handlerRemoved0(ctx);
    }

    /** Decodes one frame at {@code in}'s reader index, or returns null (consuming nothing) if it is not complete. */
    private Message decodeFrame(ByteBuf in) {
        int readable = in.readableBytes();
        if (readable < ProtocolLimits.LENGTH_FIELD_BYTES) {
            return null;
        }
        int start = in.readerIndex();
        long length = in.getUnsignedInt(start);
        if (length > ProtocolLimits.MAX_FRAME) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED,
                    "frame length " + length + " is over the limit " + ProtocolLimits.MAX_FRAME);
        }
        if (length < ProtocolLimits.HEADER_BYTES) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "frame length " + length + " is shorter than its header");
        }
        if (readable >= 5) {
            int version = in.getUnsignedByte(start + 4);
            if (version != ProtocolLimits.VERSION) {
                throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION,
                        "frame version " + version + ", this peer speaks version " + ProtocolLimits.VERSION);
            }
        }
        if (readable < 6) {
            return null;
        }
        int code = in.getUnsignedByte(start + 5);
        MessageType type = MessageType.fromCode(code);
        if (type == null) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, String.format("unknown message type 0x%02x", code));
        }
        int bodyLength = (int) length - ProtocolLimits.HEADER_BYTES;
        int maxBody = maxBody(type);
        if (bodyLength > maxBody) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED,
                    type + " body of " + bodyLength + " bytes is over its limit " + maxBody);
        }
        int frameBytes = ProtocolLimits.LENGTH_FIELD_BYTES + (int) length;
        if (beforeHelloLimit > 0 && !accepted && frameBytes > beforeHelloLimit) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, type + " frame of " + frameBytes + " bytes before the HELLO was"
                    + " accepted; at most " + beforeHelloLimit + " bytes may come before HELLO_OK");
        }
        if (reservedFrame == 0) {
            if (!budget.tryReserve(frameBytes)) {
                waitingForBudget = true;
                return null;
            }
            reservedFrame = frameBytes;
        }
        if (readable < frameBytes) {
            // the frame's bytes are reserved from the budget: make room for all of them at once, as
            // the cumulation grown read by read copies a BLOCKS frame of a megabyte about four times
            // over (never while a message still holds a slice of it). Exactly that room, the frame
            // first: ensureWritable would round up to a power of two, and bytes of earlier frames
            // would stay in front, holding up to twice what the budget reserved
            if (budget != FrameBudget.UNLIMITED && in.refCnt() == 1 && !in.isReadOnly() && in.capacity() - in.readerIndex() < frameBytes) {
                in.discardReadBytes();
                if (in.capacity() < frameBytes && frameBytes <= in.maxCapacity()) {
                    in.capacity(frameBytes);
                }
            }
            return null;
        }
        // Parse from a non-retained view; only the final payload-carrying message retains anything.
        ByteBuf body = in.slice(start + 6, bodyLength);
        Message m = parseBody(type, body);
        if (body.isReadable()) {
            io.netty.util.ReferenceCountUtil.release(m);
            throw new ProtocolException(ErrorCode.BAD_FRAME, type + " has " + body.readableBytes() + " trailing bytes");
        }
        in.skipBytes(frameBytes);
        lastFrameBytes = reservedFrame;
        reservedFrame = 0; // now the message's consumer's
        frames++;
        return m;
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

    private Message parseBody(MessageType type, ByteBuf b) {
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
                return parseBlocks(b);
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
                return parseRestoreData(b);
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

    private Blocks parseBlocks(ByteBuf b) {
        int n = count(b, ProtocolLimits.MAX_BLOCKS_PER_FRAME, "BLOCKS count", 0);
        long[] lbns = new long[n];
        byte[] codecs = new byte[n];
        int[] offsets = new int[n];
        int[] lengths = new int[n];
        int entriesStart = b.readerIndex();
        int frameStart = -1;
        for (int i = 0; i < n; i++) {
            lbns[i] = lbn(b, "lbn");
            int codec = u8(b, "codec");
            if (codec != PayloadCodec.RAW && codec != PayloadCodec.ZSTD && !PayloadCodec.isFrame(codec)) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, "BLOCKS entry " + i + " has codec " + PayloadCodec.name(codec));
            }
            codecs[i] = (byte) codec;
            if (PayloadCodec.isFrame(codec)) {
                requireFrames(codec, "BLOCKS entry " + i + " (LBN " + lbns[i] + ")");
                if (codec == PayloadCodec.ZSTD_FRAME) {
                    checkFrameEnd(lbns, codecs, lengths, frameStart, i);
                    frameStart = i;
                } else if (frameStart < 0) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "BLOCKS entry " + i + " (LBN " + lbns[i]
                            + ") is a frame member without a zstd frame before it");
                }
                lengths[i] = frameLength(b, codec, "BLOCKS entry " + i + " (LBN " + lbns[i] + ")");
            } else {
                checkFrameEnd(lbns, codecs, lengths, frameStart, i);
                frameStart = -1;
                lengths[i] = payloadLength(b, codec, "BLOCKS entry " + i);
            }
            offsets[i] = b.readerIndex() - entriesStart;
            b.skipBytes(lengths[i]);
        }
        checkFrameEnd(lbns, codecs, lengths, frameStart, n);
        ByteBuf data = b.retainedSlice(entriesStart, b.readerIndex() - entriesStart);
        return new Blocks(n, lbns, codecs, offsets, lengths, data);
    }

    /** Refuses a compressed-frame codec on a connection that did not agree on protocol 4. */
    private void requireFrames(int codec, String what) {
        if (protocolVersion < PayloadCodec.FRAMES_SINCE_VERSION) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, what + " has codec " + PayloadCodec.name(codec)
                    + ", which needs protocol version " + PayloadCodec.FRAMES_SINCE_VERSION + "; this connection agreed on version "
                    + protocolVersion);
        }
    }

    /**
     * Checks the BLOCKS frame that starts at {@code start} and ends before {@code end} (nothing if
     * {@code start < 0}): at least 2 members, at most 1 MiB raw, a payload within its limit.
     */
    private void checkFrameEnd(long[] lbns, byte[] codecs, int[] lengths, int start, int end) {
        if (start < 0) {
            return;
        }
        int m = end - start;
        if (m < 2) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "zstd frame of LBN " + lbns[start]
                    + " has no frame member after it; a frame holds 2 or more blocks");
        }
        if (m > ProtocolLimits.MAX_FRAME_MEMBERS || (blockSize != 0 && (long) m * blockSize > ProtocolLimits.FRAME_MAX_RAW)) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "zstd frame of LBN " + lbns[start] + " holds " + m
                    + " blocks, over the limit of " + ProtocolLimits.FRAME_MAX_RAW + " raw bytes");
        }
        if (blockSize != 0 && lengths[start] > ProtocolLimits.maxFramePayload(m, blockSize)) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "zstd frame of LBN " + lbns[start] + " has a payload of "
                    + lengths[start] + " bytes, over the limit " + ProtocolLimits.maxFramePayload(m, blockSize) + " for " + m + " blocks");
        }
    }

    /** The length field of a frame block: 0 for a member, 1..MAX_PAYLOAD for a zstd frame (checked against its members later). */
    private int frameLength(ByteBuf b, int codec, String what) {
        long len = u32(b, "payload length");
        if (codec == PayloadCodec.FRAME_MEMBER) {
            if (len != 0) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, what + ": a frame member carries no payload, got length " + len);
            }
            return 0;
        }
        if (len > ProtocolLimits.MAX_PAYLOAD) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, what + ": zstd frame of " + len + " bytes is over its limit "
                    + ProtocolLimits.MAX_PAYLOAD);
        }
        if (len == 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, what + ": zstd frame of length 0");
        }
        need(b, (int) len, "payload");
        return (int) len;
    }

    private RestoreData parseRestoreData(ByteBuf b) {
        long startLbn = lbn(b, "startLbn");
        int n = count(b, ProtocolLimits.MAX_BLOCKS_PER_FRAME, "RESTORE_DATA count", 0);
        byte[] codecs = new byte[n];
        byte[] fps = new byte[n * Fingerprint.BYTES];
        int[] offsets = new int[n];
        int[] lengths = new int[n];
        int[] memberIndexes = new int[n];
        int[] frameOrdinals = new int[n];
        int[] frameBlocks = null;
        int[] frameMembers = null;
        int frames = 0;
        int entriesStart = b.readerIndex();
        for (int i = 0; i < n; i++) {
            int codec = u8(b, "codec");
            if (!PayloadCodec.isKnown(codec) && !PayloadCodec.isFrame(codec)) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, "RESTORE_DATA entry " + i + " has unknown codec " + codec);
            }
            codecs[i] = (byte) codec;
            if (codec == PayloadCodec.ZERO) {
                continue;
            }
            need(b, Fingerprint.BYTES, "fingerprint");
            b.readBytes(fps, i * Fingerprint.BYTES, Fingerprint.BYTES);
            if (codec == PayloadCodec.FRAME_MEMBER) {
                if (protocolVersion < PayloadCodec.FRAMES_SINCE_VERSION) { // the text only when it fails: most blocks are members
                    requireFrames(codec, "RESTORE_DATA entry " + i + " (LBN " + (startLbn + i) + ")");
                }
                int member = u16(b, "member");
                int ordinal = u16(b, "ordinal");
                if (ordinal >= frames || member >= frameMembers[ordinal]) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "RESTORE_DATA entry " + i + " (LBN " + (startLbn + i)
                            + ") is member " + member + " of frame " + ordinal + ", which this message did not send before it"
                            + (ordinal < frames ? " (it has " + frameMembers[ordinal] + " members)" : " (" + frames + " frames so far)"));
                }
                memberIndexes[i] = member;
                frameOrdinals[i] = ordinal;
                continue;
            }
            if (codec == PayloadCodec.ZSTD_FRAME) {
                requireFrames(codec, "RESTORE_DATA entry " + i + " (LBN " + (startLbn + i) + ")");
                int member = u16(b, "member");
                int members = u16(b, "members");
                String what = "RESTORE_DATA entry " + i + " (LBN " + (startLbn + i) + ")";
                if (members < 1 || members > ProtocolLimits.MAX_FRAME_MEMBERS
                        || (blockSize != 0 && (long) members * blockSize > ProtocolLimits.FRAME_MAX_RAW)) {
                    throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, what + ": a frame of " + members
                            + " blocks is outside 1 block .. " + ProtocolLimits.FRAME_MAX_RAW + " raw bytes");
                }
                if (member >= members) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, what + ": member " + member + " of a frame of " + members + " blocks");
                }
                if (frameBlocks == null) {
                    frameBlocks = new int[n];
                    frameMembers = new int[n];
                }
                lengths[i] = frameLength(b, codec, what);
                if (blockSize != 0 && lengths[i] > ProtocolLimits.maxFramePayload(members, blockSize)) {
                    throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, what + ": zstd frame of " + lengths[i] + " bytes is over the limit "
                            + ProtocolLimits.maxFramePayload(members, blockSize) + " for " + members + " blocks");
                }
                memberIndexes[i] = member;
                frameOrdinals[i] = frames;
                frameBlocks[frames] = i;
                frameMembers[frames] = members;
                frames++;
            } else {
                lengths[i] = payloadLength(b, codec, i);
            }
            offsets[i] = b.readerIndex() - entriesStart;
            b.skipBytes(lengths[i]);
        }
        ByteBuf data = b.retainedSlice(entriesStart, b.readerIndex() - entriesStart);
        return new RestoreData(startLbn, n, codecs, fps, offsets, lengths, data, memberIndexes, frameOrdinals,
                frames == 0 ? NO_FRAMES : Arrays.copyOf(frameBlocks, frames), frames == 0 ? NO_FRAMES : Arrays.copyOf(frameMembers, frames));
    }

    private static final int[] NO_FRAMES = new int[0];

    /** Reads a payload length field and checks it against the codec's limit and the remaining body. */
    private int payloadLength(ByteBuf b, int codec, String what) {
        long len = u32(b, "payload length");
        long max = blockSize == 0 ? (codec == PayloadCodec.RAW ? ProtocolLimits.MAX_BLOCK_SIZE : ProtocolLimits.MAX_PAYLOAD)
                : (codec == PayloadCodec.RAW ? blockSize : ProtocolLimits.maxZstdPayload(blockSize));
        if (len > max) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED,
                    what + ": " + PayloadCodec.name(codec) + " payload of " + len + " bytes is over its limit " + max);
        }
        if (len == 0 || (codec == PayloadCodec.RAW && blockSize != 0 && len != blockSize)) {
            throw new ProtocolException(ErrorCode.BAD_FRAME,
                    what + ": " + PayloadCodec.name(codec) + " payload of " + len + " bytes for block size " + blockSize);
        }
        need(b, (int) len, "payload");
        return (int) len;
    }

    /** {@link #payloadLength(ByteBuf, int, String)} for RESTORE_DATA entry {@code entry}, naming it only when it fails (no string per block). */
    private int payloadLength(ByteBuf b, int codec, int entry) {
        long len = b.readableBytes() >= 4 ? b.getUnsignedInt(b.readerIndex()) : -1;
        boolean ok = len > 0 && (blockSize == 0
                ? len <= (codec == PayloadCodec.RAW ? ProtocolLimits.MAX_BLOCK_SIZE : ProtocolLimits.MAX_PAYLOAD)
                : codec == PayloadCodec.RAW ? len == blockSize : len <= ProtocolLimits.maxZstdPayload(blockSize))
                && b.readableBytes() - 4 >= len;
        return ok ? (int) b.readUnsignedInt() : payloadLength(b, codec, "RESTORE_DATA entry " + entry);
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
    private static long lbn(ByteBuf b, String field) {
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
