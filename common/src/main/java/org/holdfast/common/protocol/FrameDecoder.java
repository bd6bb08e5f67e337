package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Turns the byte stream of a connection into {@link Message}s, refusing anything outside protocol v2.
 * This class does the framing (length prefix, budget, hold after HELLO, discard after a violation);
 * {@link MessageParser} parses each body by its type, {@link BlockPayloadParser} the BLOCKS and
 * RESTORE_DATA payload tables (their body diagrams are there).
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
    private final MessageParser parser = new MessageParser();

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
        parser.blockSize(blockSize);
    }

    /**
     * Tells the decoder the protocol version the connection agreed on, which decides whether the
     * compressed-frame codecs of protocol 4 are accepted. Call from the channel's event loop before
     * any BLOCKS or RESTORE_DATA can arrive.
     */
    public void protocolVersion(int version) {
        parser.protocolVersion(version);
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
        int maxBody = MessageParser.maxBody(type);
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
        Message m = parser.parse(type, body);
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
}
