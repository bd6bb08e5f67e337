package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * BLOCKS (0x14), agent to server: {@code count} payloads asked for by NEED, each with its LBN and
 * codec ({@link PayloadCodec#RAW} or {@link PayloadCodec#ZSTD}; since protocol 4 also
 * {@link PayloadCodec#ZSTD_FRAME}, one zstd frame holding that block and the
 * {@link PayloadCodec#FRAME_MEMBER} blocks right after it, which carry no payload).
 *
 * <p>Layout without per-block objects: block {@code i} has LBN {@code lbns[i]}, codec
 * {@code codecs[i]}, and its payload is {@code lengths[i]} bytes of {@code data} at index
 * {@code offsets[i]} (absolute index into {@code data}; read with {@code data.getBytes}, never by
 * moving its reader index).
 *
 * <p><b>Ownership.</b> The message is reference counted through {@code data}. The decoder emits it
 * holding a retained slice of the received frame; whoever receives it releases it exactly once
 * (a {@code SimpleChannelInboundHandler} does so automatically; otherwise call
 * {@link #release()} in {@code finally}), and must {@link #retain()} it to keep it beyond that.
 * A sender that builds one with {@link Builder} hands ownership to {@code writeAndFlush}: the
 * encoder releases it after writing. The arrays are owned by the message and not copied.
 */
public record Blocks(int count, long[] lbns, byte[] codecs, int[] offsets, int[] lengths, ByteBuf data)
        implements Message, PooledPayloads<Blocks> {

    /** Wire bytes per block besides its payload: u64 lbn, u8 codec, u32 length. */
    public static final int BLOCK_HEADER_BYTES = 8 + 1 + 4;
    /** Wire bytes of a BLOCKS frame before its first block: length field, version, type, u32 count. */
    public static final int FRAME_PREFIX_BYTES = ProtocolLimits.LENGTH_FIELD_BYTES + ProtocolLimits.HEADER_BYTES + 4;

    public Blocks {
        if (count < 0 || count > ProtocolLimits.MAX_BLOCKS_PER_FRAME) {
            throw new IllegalArgumentException(count + " blocks, limit " + ProtocolLimits.MAX_BLOCKS_PER_FRAME);
        }
        if (data == null || lbns == null || codecs == null || offsets == null || lengths == null) {
            throw new IllegalArgumentException("blocks need data and per-block arrays");
        }
        if (lbns.length != count || codecs.length != count || offsets.length != count || lengths.length != count) {
            throw new IllegalArgumentException("per-block arrays must have exactly " + count + " entries");
        }
        for (int i = 0; i < count; i++) {
            int c = codecs[i];
            if (c != PayloadCodec.RAW && c != PayloadCodec.ZSTD && !PayloadCodec.isFrame(c)) {
                throw new IllegalArgumentException("block " + i + ": codec " + PayloadCodec.name(codecs[i]) + " not allowed in BLOCKS");
            }
            if (lbns[i] < 0) {
                throw new IllegalArgumentException("block " + i + ": negative lbn " + lbns[i]);
            }
            String frameError = frameError(codecs, count, i);
            if (frameError != null) {
                throw new IllegalArgumentException("block " + i + ": " + frameError);
            }
            if (c == PayloadCodec.FRAME_MEMBER) {
                if (lengths[i] != 0) {
                    throw new IllegalArgumentException("block " + i + ": a frame member has no payload, got " + lengths[i] + " bytes");
                }
                continue;
            }
            if (lengths[i] < 1 || lengths[i] > ProtocolLimits.MAX_PAYLOAD) {
                throw new IllegalArgumentException("block " + i + ": payload length " + lengths[i] + " outside 1.." + ProtocolLimits.MAX_PAYLOAD);
            }
            if (offsets[i] < 0 || offsets[i] > data.writerIndex() - lengths[i]) {
                throw new IllegalArgumentException("block " + i + ": payload outside data");
            }
        }
    }

    /**
     * What is wrong with the frame structure at block {@code i} ({@code ZSTD_FRAME} without a
     * following member, {@code FRAME_MEMBER} without a frame before it), or null. Shared by the
     * record and the decoder, which reports it as a protocol error.
     */
    static String frameError(byte[] codecs, int count, int i) {
        int c = codecs[i];
        if (c == PayloadCodec.ZSTD_FRAME && (i + 1 >= count || codecs[i + 1] != PayloadCodec.FRAME_MEMBER)) {
            return "a zstd-frame block must be followed by at least one frame-member block (a frame holds 2 or more blocks)";
        }
        if (c == PayloadCodec.FRAME_MEMBER && (i == 0 || !PayloadCodec.isFrame(codecs[i - 1]))) {
            return "a frame-member block must follow a zstd-frame block or another member";
        }
        return null;
    }

    /**
     * Members of the frame starting at block {@code i} (a {@link PayloadCodec#ZSTD_FRAME} block):
     * 1 plus the {@link PayloadCodec#FRAME_MEMBER} blocks right after it.
     */
    public int frameMembers(int i) {
        int m = 1;
        while (i + m < count && codecs[i + m] == PayloadCodec.FRAME_MEMBER) {
            m++;
        }
        return m;
    }

    /** A builder whose buffer comes from {@code alloc}, sized for {@code expectedPayloadBytes}. */
    public static Builder builder(ByteBufAllocator alloc, int expectedPayloadBytes) {
        return new Builder(new PayloadBuffer(alloc.buffer(FRAME_PREFIX_BYTES + Math.max(0, expectedPayloadBytes))));
    }

    /** A builder that writes into {@code target} (empty, e.g. a reused buffer), which it owns from now on. */
    public static Builder builder(ByteBuf target) {
        if (target.readerIndex() != 0 || target.writerIndex() != 0) {
            throw new IllegalArgumentException("a builder needs an empty buffer, got " + target);
        }
        return new Builder(new PayloadBuffer(target));
    }

    /** Body bytes of this message on the wire (without length, version, type). */
    public long bodyBytes() {
        return 4 + (long) BLOCK_HEADER_BYTES * count + payloadBytes();
    }

    /**
     * True if {@code data}'s readable bytes are exactly this message's whole frame, length field
     * first (as {@link Builder} lays it out): the encoder then sends {@code data} itself instead
     * of copying every payload into a new buffer. Checks every header byte, so a message built
     * any other way, or whose arrays were changed, is encoded by copying as before.
     */
    public boolean isFramed() {
        long body = bodyBytes();
        int p = data.readerIndex();
        if (body > ProtocolLimits.MAX_BODY || data.readableBytes() != ProtocolLimits.LENGTH_FIELD_BYTES + ProtocolLimits.HEADER_BYTES + body
                || data.getInt(p) != ProtocolLimits.HEADER_BYTES + body || data.getByte(p + 4) != ProtocolLimits.VERSION
                || data.getByte(p + 5) != (byte) MessageType.BLOCKS.code() || data.getInt(p + 6) != count) {
            return false;
        }
        int at = p + FRAME_PREFIX_BYTES;
        for (int i = 0; i < count; i++) {
            if (offsets[i] != at + BLOCK_HEADER_BYTES || data.getLong(at) != lbns[i] || data.getByte(at + 8) != codecs[i]
                    || data.getInt(at + 9) != lengths[i]) {
                return false;
            }
            at += BLOCK_HEADER_BYTES + lengths[i];
        }
        return at == data.writerIndex();
    }

    @Override
    public MessageType type() {
        return MessageType.BLOCKS;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Blocks b) || b.count != count || !Arrays.equals(b.lbns, lbns) || !Arrays.equals(b.codecs, codecs)
                || !Arrays.equals(b.lengths, lengths)) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if (!ByteBufUtil.equals(data, offsets[i], b.data, b.offsets[i], lengths[i])) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(lbns) * 31 + Arrays.hashCode(lengths);
    }

    @Override
    public String toString() {
        return "Blocks[count=" + count + ", payloadBytes=" + payloadBytes() + "]";
    }

    /**
     * Collects payloads into one pooled buffer, laid out as the whole BLOCKS frame (each block's
     * header right before its payload, the frame's prefix filled in by {@link #build()}), so the
     * encoder sends that buffer without copying it ({@link #isFramed()}). Not thread-safe. Either
     * {@link #build()} (the message then owns the buffer) or {@link #close()} (releases it); close
     * after build is a no-op.
     */
    public static final class Builder implements AutoCloseable {
        /** A built or closed builder's arrays, for the next builder on the same thread (17 KiB less to allocate per frame). */
        private static final ThreadLocal<Scratch> SPARE = new ThreadLocal<>();
        private static final java.util.concurrent.atomic.AtomicLong SCRATCH_MADE = new java.util.concurrent.atomic.AtomicLong();

        private final PayloadBuffer payloads;
        private Scratch scratch; // null once built or closed: then another builder may be using the arrays
        private final long[] lbns;
        private final byte[] codecs;
        private final int[] offsets;
        private final int[] lengths;
        private int count;

        /** The per-block arrays a builder fills, at the frame's limit; the message gets copies of their used part. */
        private static final class Scratch {
            final long[] lbns = new long[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
            final byte[] codecs = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
            final int[] offsets = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
            final int[] lengths = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];

            Scratch() {
                SCRATCH_MADE.incrementAndGet();
            }
        }

        private Builder(PayloadBuffer payloads) {
            Scratch s = SPARE.get();
            if (s == null) {
                s = new Scratch();
            } else {
                SPARE.remove(); // ours alone until build or close gives it back
            }
            this.scratch = s;
            this.lbns = s.lbns;
            this.codecs = s.codecs;
            this.offsets = s.offsets;
            this.lengths = s.lengths;
            this.payloads = payloads;
            payloads.room("BLOCKS", 0, 0).writeZero(FRAME_PREFIX_BYTES); // filled in by build()
            payloads.headerWritten(FRAME_PREFIX_BYTES);
        }

        /** Blocks added so far. */
        public int count() {
            return count;
        }

        /** Payload bytes added so far. */
        public int payloadBytes() {
            return payloads.payloadBytes();
        }

        /** True if one more payload of {@code length} bytes keeps the frame within the limits. */
        public boolean fits(int length) {
            return payloads.fits(count + 1, length);
        }

        /**
         * True if a frame of {@code members} blocks with a payload of {@code length} bytes keeps
         * the message within the limits ({@link #addFrame} plus {@code members - 1}
         * {@link #addFrameMember}).
         */
        public boolean fitsFrame(int length, int members) {
            return payloads.fits(count + members, length);
        }

        /**
         * Starts a compressed frame (protocol 4): {@code len} bytes of {@code src} at {@code off}
         * are one zstd frame of block {@code lbn} and the blocks added next with
         * {@link #addFrameMember}, in that order.
         */
        public Builder addFrame(long lbn, byte[] src, int off, int len) {
            begin(lbn, PayloadCodec.ZSTD_FRAME, len).writeBytes(src, off, len);
            return added();
        }

        /** Adds {@code lbn} as the next member of the frame {@link #addFrame} started. */
        public Builder addFrameMember(long lbn) {
            if (count == 0 || !PayloadCodec.isFrame(codecs[count - 1])) {
                throw new IllegalStateException("addFrameMember needs a frame started by addFrame");
            }
            begin(lbn, PayloadCodec.FRAME_MEMBER, 0);
            return added();
        }

        /** Adds {@code len} bytes of {@code src} at {@code off} as the payload of {@code lbn}. */
        public Builder add(long lbn, int codec, byte[] src, int off, int len) {
            begin(lbn, codec, len).writeBytes(src, off, len);
            return added();
        }

        /** Adds {@code src}'s remaining bytes (position and limit unchanged) as the payload of {@code lbn}. */
        public Builder add(long lbn, int codec, ByteBuffer src) {
            begin(lbn, codec, src.remaining()).writeBytes(src.duplicate());
            return added();
        }

        /** Records and writes block {@code count}'s header; returns the buffer its payload goes to. */
        private ByteBuf begin(long lbn, int codec, int len) {
            ByteBuf data = payloads.room("BLOCKS", count, len);
            data.writeLong(lbn).writeByte(codec).writeInt(len);
            payloads.headerWritten(BLOCK_HEADER_BYTES);
            lbns[count] = lbn;
            codecs[count] = (byte) codec;
            offsets[count] = data.writerIndex();
            lengths[count] = len;
            return data;
        }

        private Builder added() {
            count++;
            return this;
        }

        /** The message; ownership of the buffer moves to it. */
        public Blocks build() {
            try {
                return payloads.build(d -> framed(d, count, new Blocks(count, Arrays.copyOf(lbns, count), Arrays.copyOf(codecs, count),
                        Arrays.copyOf(offsets, count), Arrays.copyOf(lengths, count), d)));
            } finally {
                giveBackScratch();
            }
        }

        /** Hands the arrays to the next builder on this thread; this one adds nothing more (its buffer is gone too). */
        private void giveBackScratch() {
            if (scratch != null) {
                SPARE.set(scratch);
                scratch = null;
            }
        }

        /** Per-block arrays made so far, on any thread (for tests). */
        static long scratchMade() {
            return SCRATCH_MADE.get();
        }

        /** Fills in the frame's prefix, now that its length and block count are known. */
        private static Blocks framed(ByteBuf d, int count, Blocks b) {
            d.setInt(0, ProtocolLimits.HEADER_BYTES + (int) b.bodyBytes());
            d.setByte(4, ProtocolLimits.VERSION);
            d.setByte(5, MessageType.BLOCKS.code());
            d.setInt(6, count);
            return b;
        }

        @Override
        public void close() {
            payloads.close();
            giveBackScratch();
        }
    }
}
