package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.ReferenceCounted;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * BLOCKS (0x14), agent to server: {@code count} payloads asked for by NEED, each with its LBN and
 * codec ({@link PayloadCodec#RAW} or {@link PayloadCodec#ZSTD}).
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
        implements Message, ReferenceCounted {

    /** Wire bytes per block besides its payload: u64 lbn, u8 codec, u32 length. */
    public static final int BLOCK_HEADER_BYTES = 8 + 1 + 4;

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
            if (codecs[i] != PayloadCodec.RAW && codecs[i] != PayloadCodec.ZSTD) {
                throw new IllegalArgumentException("block " + i + ": codec " + PayloadCodec.name(codecs[i]) + " not allowed in BLOCKS");
            }
            if (lbns[i] < 0) {
                throw new IllegalArgumentException("block " + i + ": negative lbn " + lbns[i]);
            }
            if (lengths[i] < 1 || lengths[i] > ProtocolLimits.MAX_PAYLOAD) {
                throw new IllegalArgumentException("block " + i + ": payload length " + lengths[i] + " outside 1.." + ProtocolLimits.MAX_PAYLOAD);
            }
            if (offsets[i] < 0 || offsets[i] > data.writerIndex() - lengths[i]) {
                throw new IllegalArgumentException("block " + i + ": payload outside data");
            }
        }
    }

    /** A builder whose buffer comes from {@code alloc}, sized for {@code expectedPayloadBytes}. */
    public static Builder builder(ByteBufAllocator alloc, int expectedPayloadBytes) {
        return new Builder(alloc, expectedPayloadBytes);
    }

    /** Sum of payload lengths. */
    public long payloadBytes() {
        long n = 0;
        for (int i = 0; i < count; i++) {
            n += lengths[i];
        }
        return n;
    }

    /** Body bytes of this message on the wire (without length, version, type). */
    public long bodyBytes() {
        return 4 + (long) BLOCK_HEADER_BYTES * count + payloadBytes();
    }

    /** Copies block {@code i}'s payload into {@code dst} at {@code dstOff}; returns its length. */
    public int copyPayload(int i, byte[] dst, int dstOff) {
        data.getBytes(offsets[i], dst, dstOff, lengths[i]);
        return lengths[i];
    }

    @Override
    public MessageType type() {
        return MessageType.BLOCKS;
    }

    @Override
    public int refCnt() {
        return data.refCnt();
    }

    @Override
    public Blocks retain() {
        data.retain();
        return this;
    }

    @Override
    public Blocks retain(int increment) {
        data.retain(increment);
        return this;
    }

    @Override
    public Blocks touch() {
        data.touch();
        return this;
    }

    @Override
    public Blocks touch(Object hint) {
        data.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return data.release();
    }

    @Override
    public boolean release(int decrement) {
        return data.release(decrement);
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
     * Collects payloads into one pooled buffer. Not thread-safe. Either {@link #build()} (the
     * message then owns the buffer) or {@link #close()} (releases it); close after build is a no-op.
     */
    public static final class Builder implements AutoCloseable {
        private ByteBuf data;
        private final long[] lbns = new long[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final byte[] codecs = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final int[] offsets = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final int[] lengths = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private int count;

        private Builder(ByteBufAllocator alloc, int expectedPayloadBytes) {
            this.data = alloc.buffer(Math.max(0, expectedPayloadBytes));
        }

        /** Blocks added so far. */
        public int count() {
            return count;
        }

        /** Payload bytes added so far. */
        public int payloadBytes() {
            return data.writerIndex();
        }

        /** True if one more payload of {@code length} bytes keeps the frame within the limits. */
        public boolean fits(int length) {
            return count < ProtocolLimits.MAX_BLOCKS_PER_FRAME
                    && (long) data.writerIndex() + length <= ProtocolLimits.TARGET_FRAME_PAYLOAD;
        }

        /** Adds {@code len} bytes of {@code src} at {@code off} as the payload of {@code lbn}. */
        public Builder add(long lbn, int codec, byte[] src, int off, int len) {
            int at = begin(lbn, codec, len);
            data.writeBytes(src, off, len);
            return end(at);
        }

        /** Adds {@code src}'s remaining bytes (position and limit unchanged) as the payload of {@code lbn}. */
        public Builder add(long lbn, int codec, ByteBuffer src) {
            int at = begin(lbn, codec, src.remaining());
            data.writeBytes(src.duplicate());
            return end(at);
        }

        private int begin(long lbn, int codec, int len) {
            if (data == null) {
                throw new IllegalStateException("builder already built or closed");
            }
            if (!fits(len)) {
                throw new IllegalStateException("BLOCKS frame full: " + count + " blocks, " + data.writerIndex() + " bytes");
            }
            lbns[count] = lbn;
            codecs[count] = (byte) codec;
            offsets[count] = data.writerIndex();
            lengths[count] = len;
            return count;
        }

        private Builder end(int at) {
            count = at + 1;
            return this;
        }

        /** The message; ownership of the buffer moves to it. */
        public Blocks build() {
            if (data == null) {
                throw new IllegalStateException("builder already built or closed");
            }
            ByteBuf d = data;
            data = null;
            try {
                return new Blocks(count, Arrays.copyOf(lbns, count), Arrays.copyOf(codecs, count),
                        Arrays.copyOf(offsets, count), Arrays.copyOf(lengths, count), d);
            } catch (RuntimeException e) {
                d.release();
                throw e;
            }
        }

        @Override
        public void close() {
            if (data != null) {
                data.release();
                data = null;
            }
        }
    }
}
