package org.holdfast.client.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.ByteToMessageDecoder;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * Gathers the socket's reads into one buffer per frame, allocated once at the frame's full size.
 *
 * <p>Why: Netty's default cumulator grows its buffer as reads arrive (each growth a new buffer and a
 * copy of everything so far) and, while an earlier frame's slice still holds the buffer, copies it
 * again on every read; a restore's frames of about 1 MiB arrive in reads of 64 KiB, so each byte was
 * copied several times on the receiving thread. Here a frame's bytes are copied once: when a read
 * does not fit the buffer in hand, the new buffer is sized from the frame's length field (capped at
 * {@link ProtocolLimits#MAX_FRAME}, which the decoder enforces anyway) and later reads of the frame
 * go into it ({@link #SPILL} bytes more, for the next frame's start), a reused {@link FrameSlabs}
 * slab where it fits one. The bytes and their order are exactly what Netty's cumulator would produce; only
 * buffer sizes differ.
 *
 * <p>Over plain TCP the socket reads straight into the slab ({@link #readBuffer}, through
 * {@link SlabReads}): a read that lands in the slab's free end needs no copy at all, so only the
 * start of the next frame that shares a read with the end of the last one is copied.
 */
final class FrameCumulator implements ByteToMessageDecoder.Cumulator {
    /**
     * Room behind a frame for the start of the next one: the read that completes a frame usually
     * carries it too (Netty reads up to 64 KiB), and without room the whole frame would be copied again.
     */
    static final int SPILL = 64 << 10;

    /** Free bytes a slab needs for a read into it: fewer, and the read goes to an ordinary buffer. */
    static final int SMALLEST_TAIL = 8 << 10;

    private final FrameSlabs slabs;
    /** The last cumulation returned, if a slab (event loop only). */
    private FrameSlabs.Slab current;

    /** A cumulator taking its slabs from {@code slabs} ({@link FrameSlabs#SHARED} for a connection). */
    FrameCumulator(FrameSlabs slabs) {
        this.slabs = slabs;
    }

    /**
     * A buffer for the socket's next read over the free end of the frame buffer the decoder holds,
     * or null (then an ordinary read buffer): when the decoder is between frames, or the frame's
     * buffer is nearly full. Event loop only, before the read it is for.
     */
    ByteBuf readBuffer(ByteBufAllocator alloc) {
        FrameSlabs.Slab c = current;
        // readable: the decoder still holds it (it releases a cumulation once everything in it is decoded)
        if (c == null || c.refCnt() == 0 || !c.isReadable() || c.wantedRoom() < SMALLEST_TAIL) {
            return null;
        }
        return c.tail(alloc);
    }

    @Override
    public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        ByteBuf out = append(alloc, cumulation, in);
        current = out instanceof FrameSlabs.Slab s ? s : null;
        return out;
    }

    private ByteBuf append(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        if (FrameSlabs.isTailOf(in, cumulation)) {
            // the bytes are in place, right behind the cumulation's: only its writer index moves
            cumulation.writerIndex(cumulation.writerIndex() + in.readableBytes());
            in.release();
            return cumulation;
        }
        if (cumulation == in) {
            in.release();
            return cumulation;
        }
        if (!cumulation.isReadable() && in.isContiguous()) {
            cumulation.release(); // nothing pending: the read buffer itself is the cumulation
            return in;
        }
        try {
            int required = in.readableBytes();
            // a buffer no slice shares, with room: append (no reallocation, no copy of what is there)
            if (cumulation.refCnt() == 1 && !cumulation.isReadOnly() && cumulation.writableBytes() >= required) {
                cumulation.writeBytes(in, in.readerIndex(), required);
                in.readerIndex(in.writerIndex());
                return cumulation;
            }
            int pending = cumulation.readableBytes();
            int frame = frameBytes(cumulation, in);
            int size = Math.max(pending + required, frame == 0 ? 0 : frame + SPILL);
            ByteBuf whole = slabs.buffer(alloc, size);
            try {
                whole.writeBytes(cumulation, cumulation.readerIndex(), pending);
                whole.writeBytes(in, in.readerIndex(), required);
            } catch (RuntimeException | Error e) {
                whole.release();
                throw e;
            }
            in.readerIndex(in.writerIndex());
            cumulation.release();
            return whole;
        } finally {
            in.release();
        }
    }

    /**
     * Bytes of the frame starting at {@code cumulation}'s reader index, length field included, read
     * across both buffers; 0 while fewer than its four bytes are known or if it claims more than
     * the protocol allows (the decoder refuses that frame).
     */
    static int frameBytes(ByteBuf cumulation, ByteBuf in) {
        int have = cumulation.readableBytes();
        if (have + in.readableBytes() < ProtocolLimits.LENGTH_FIELD_BYTES) {
            return 0;
        }
        long length = 0;
        for (int i = 0; i < ProtocolLimits.LENGTH_FIELD_BYTES; i++) {
            int b = i < have ? cumulation.getUnsignedByte(cumulation.readerIndex() + i)
                    : in.getUnsignedByte(in.readerIndex() + i - have);
            length = length << 8 | b;
        }
        return length > ProtocolLimits.MAX_FRAME ? 0 : (int) length + ProtocolLimits.LENGTH_FIELD_BYTES;
    }
}
