package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.ReferenceCounted;
import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/**
 * RESTORE_DATA (0x24), server to agent: blocks {@code startLbn .. startLbn + count - 1} of the
 * snapshot, in LBN order.
 *
 * <p>Layout without per-block objects: block {@code i} has codec {@code codecs[i]}; unless it is
 * {@link PayloadCodec#ZERO}, its fingerprint is at {@code i * 32} in the packed
 * {@code fingerprints} array (all zero for zero blocks) and its payload is {@code lengths[i]}
 * bytes of {@code data} at absolute index {@code offsets[i]} (zero blocks: offset and length 0).
 *
 * <p><b>Ownership.</b> Reference counted through {@code data}, exactly like {@link Blocks}: the
 * receiver of a decoded message releases it once; a message given to {@code writeAndFlush} is
 * released by the encoder.
 */
public record RestoreData(long startLbn, int count, byte[] codecs, byte[] fingerprints, int[] offsets, int[] lengths,
                          ByteBuf data) implements Message, ReferenceCounted {

    public RestoreData {
        if (startLbn < 0) {
            throw new IllegalArgumentException("startLbn must not be negative: " + startLbn);
        }
        if (count < 0 || count > ProtocolLimits.MAX_BLOCKS_PER_FRAME) {
            throw new IllegalArgumentException(count + " blocks, limit " + ProtocolLimits.MAX_BLOCKS_PER_FRAME);
        }
        if (data == null || codecs == null || fingerprints == null || offsets == null || lengths == null) {
            throw new IllegalArgumentException("restore data needs data and per-block arrays");
        }
        if (codecs.length != count || offsets.length != count || lengths.length != count
                || fingerprints.length != count * Fingerprint.BYTES) {
            throw new IllegalArgumentException("per-block arrays must have exactly " + count + " entries");
        }
        for (int i = 0; i < count; i++) {
            if (!PayloadCodec.isKnown(codecs[i])) {
                throw new IllegalArgumentException("block " + i + ": unknown codec " + codecs[i]);
            }
            if (codecs[i] == PayloadCodec.ZERO) {
                if (lengths[i] != 0) {
                    throw new IllegalArgumentException("block " + i + ": zero block with a payload");
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

    /** A builder whose buffer comes from {@code alloc}, sized for {@code expectedPayloadBytes}. */
    public static Builder builder(ByteBufAllocator alloc, long startLbn, int expectedPayloadBytes) {
        return new Builder(alloc, startLbn, expectedPayloadBytes);
    }

    /** The LBN of block {@code i}. */
    public long lbn(int i) {
        return startLbn + i;
    }

    /** Codec of block {@code i}. */
    public int codec(int i) {
        return codecs[i];
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
        long n = 8 + 4 + count;
        for (int i = 0; i < count; i++) {
            if (codecs[i] != PayloadCodec.ZERO) {
                n += Fingerprint.BYTES + 4 + lengths[i];
            }
        }
        return n;
    }

    /** Copies block {@code i}'s payload into {@code dst} at {@code dstOff}; returns its length (0 for a zero block). */
    public int copyPayload(int i, byte[] dst, int dstOff) {
        data.getBytes(offsets[i], dst, dstOff, lengths[i]);
        return lengths[i];
    }

    @Override
    public MessageType type() {
        return MessageType.RESTORE_DATA;
    }

    @Override
    public int refCnt() {
        return data.refCnt();
    }

    @Override
    public RestoreData retain() {
        data.retain();
        return this;
    }

    @Override
    public RestoreData retain(int increment) {
        data.retain(increment);
        return this;
    }

    @Override
    public RestoreData touch() {
        data.touch();
        return this;
    }

    @Override
    public RestoreData touch(Object hint) {
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
        if (!(o instanceof RestoreData r) || r.startLbn != startLbn || r.count != count || !Arrays.equals(r.codecs, codecs)
                || !Arrays.equals(r.fingerprints, fingerprints) || !Arrays.equals(r.lengths, lengths)) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if (lengths[i] > 0 && !ByteBufUtil.equals(data, offsets[i], r.data, r.offsets[i], lengths[i])) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(startLbn) * 31 + Arrays.hashCode(fingerprints);
    }

    @Override
    public String toString() {
        return "RestoreData[startLbn=" + startLbn + ", count=" + count + ", payloadBytes=" + payloadBytes() + "]";
    }

    /**
     * Collects consecutive blocks into one pooled buffer. Not thread-safe. Either {@link #build()}
     * (the message then owns the buffer) or {@link #close()} (releases it).
     */
    public static final class Builder implements AutoCloseable {
        private ByteBuf data;
        private final long startLbn;
        private final byte[] codecs = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final byte[] fingerprints = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME * Fingerprint.BYTES];
        private final int[] offsets = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final int[] lengths = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private int count;

        private Builder(ByteBufAllocator alloc, long startLbn, int expectedPayloadBytes) {
            this.data = alloc.buffer(Math.max(0, expectedPayloadBytes));
            this.startLbn = startLbn;
        }

        /** Blocks added so far. */
        public int count() {
            return count;
        }

        /** The LBN the next added block gets. */
        public long nextLbn() {
            return startLbn + count;
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

        /** Adds a zero block. */
        public Builder addZero() {
            checkOpen(0);
            codecs[count] = PayloadCodec.ZERO;
            offsets[count] = 0;
            lengths[count] = 0;
            count++;
            return this;
        }

        /** Adds a block: its fingerprint (32 bytes of {@code fp} at {@code fpOff}) and payload bytes. */
        public Builder add(int codec, byte[] fp, int fpOff, byte[] src, int off, int len) {
            begin(codec, fp, fpOff, len);
            data.writeBytes(src, off, len);
            count++;
            return this;
        }

        /** Adds a block whose payload is {@code len} bytes of {@code src} at absolute index {@code index}. */
        public Builder add(int codec, byte[] fp, int fpOff, ByteBuf src, int index, int len) {
            begin(codec, fp, fpOff, len);
            data.writeBytes(src, index, len);
            count++;
            return this;
        }

        private void checkOpen(int len) {
            if (data == null) {
                throw new IllegalStateException("builder already built or closed");
            }
            if (!fits(len)) {
                throw new IllegalStateException("RESTORE_DATA frame full: " + count + " blocks, " + data.writerIndex() + " bytes");
            }
        }

        private void begin(int codec, byte[] fp, int fpOff, int len) {
            checkOpen(len);
            if (codec != PayloadCodec.RAW && codec != PayloadCodec.ZSTD) {
                throw new IllegalArgumentException("codec " + PayloadCodec.name(codec) + " needs addZero or a payload codec");
            }
            System.arraycopy(fp, fpOff, fingerprints, count * Fingerprint.BYTES, Fingerprint.BYTES);
            codecs[count] = (byte) codec;
            offsets[count] = data.writerIndex();
            lengths[count] = len;
        }

        /** The message; ownership of the buffer moves to it. */
        public RestoreData build() {
            if (data == null) {
                throw new IllegalStateException("builder already built or closed");
            }
            ByteBuf d = data;
            data = null;
            try {
                return new RestoreData(startLbn, count, Arrays.copyOf(codecs, count),
                        Arrays.copyOf(fingerprints, count * Fingerprint.BYTES), Arrays.copyOf(offsets, count),
                        Arrays.copyOf(lengths, count), d);
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
