package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
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
 * <p><b>Compressed frames (protocol 4).</b> A {@link PayloadCodec#ZSTD_FRAME} block's payload is a
 * whole stored frame of {@code frameMembers[o]} blocks, of which this block is member
 * {@code memberIndexes[i]}; {@code o = frameOrdinals[i]} is the frame's ordinal in this message (0
 * for its first frame) and {@code frameBlocks[o] == i}. A {@link PayloadCodec#FRAME_MEMBER} block
 * has no payload: it is member {@code memberIndexes[i]} of the frame with ordinal
 * {@code frameOrdinals[i]}, sent earlier in this message. For other codecs both are 0.
 *
 * <p><b>Ownership.</b> Reference counted through {@code data}, exactly like {@link Blocks}: the
 * receiver of a decoded message releases it once; a message given to {@code writeAndFlush} is
 * released by the encoder.
 */
public record RestoreData(long startLbn, int count, byte[] codecs, byte[] fingerprints, int[] offsets, int[] lengths,
                          ByteBuf data, int[] memberIndexes, int[] frameOrdinals, int[] frameBlocks, int[] frameMembers)
        implements Message, PooledPayloads<RestoreData> {

    /** Wire bytes of a {@link PayloadCodec#ZSTD_FRAME} block besides its payload: codec, fp, u16 member, u16 members, u32 length. */
    public static final int FRAME_HEADER_BYTES = 1 + Fingerprint.BYTES + 2 + 2 + 4;
    /** Wire bytes of a {@link PayloadCodec#FRAME_MEMBER} block: codec, fp, u16 member, u16 ordinal. */
    public static final int MEMBER_BYTES = 1 + Fingerprint.BYTES + 2 + 2;

    /** A message without compressed frames (protocols 2 and 3). */
    public RestoreData(long startLbn, int count, byte[] codecs, byte[] fingerprints, int[] offsets, int[] lengths, ByteBuf data) {
        this(startLbn, count, codecs, fingerprints, offsets, lengths, data, new int[count], new int[count], new int[0], new int[0]);
    }

    public RestoreData {
        if (startLbn < 0) {
            throw new IllegalArgumentException("startLbn must not be negative: " + startLbn);
        }
        if (count < 0 || count > ProtocolLimits.MAX_BLOCKS_PER_FRAME) {
            throw new IllegalArgumentException(count + " blocks, limit " + ProtocolLimits.MAX_BLOCKS_PER_FRAME);
        }
        if (data == null || codecs == null || fingerprints == null || offsets == null || lengths == null
                || memberIndexes == null || frameOrdinals == null || frameBlocks == null || frameMembers == null) {
            throw new IllegalArgumentException("restore data needs data and per-block arrays");
        }
        if (codecs.length != count || offsets.length != count || lengths.length != count
                || fingerprints.length != count * Fingerprint.BYTES || memberIndexes.length != count || frameOrdinals.length != count) {
            throw new IllegalArgumentException("per-block arrays must have exactly " + count + " entries");
        }
        if (frameBlocks.length != frameMembers.length || frameBlocks.length > ProtocolLimits.MAX_FRAMES_PER_MESSAGE) {
            throw new IllegalArgumentException("per-frame arrays differ in length or exceed " + ProtocolLimits.MAX_FRAMES_PER_MESSAGE);
        }
        int frames = 0;
        for (int i = 0; i < count; i++) {
            int c = codecs[i];
            if (!PayloadCodec.isKnown(c) && !PayloadCodec.isFrame(c)) {
                throw new IllegalArgumentException("block " + i + ": unknown codec " + codecs[i]);
            }
            if (c == PayloadCodec.ZERO) {
                if (lengths[i] != 0) {
                    throw new IllegalArgumentException("block " + i + ": zero block with a payload");
                }
                continue;
            }
            if (c == PayloadCodec.FRAME_MEMBER) {
                int o = frameOrdinals[i];
                if (lengths[i] != 0 || o < 0 || o >= frames || memberIndexes[i] < 0 || memberIndexes[i] >= frameMembers[o]) {
                    throw new IllegalArgumentException("block " + i + ": frame member " + memberIndexes[i] + " of frame " + o
                            + " does not name a member of a frame sent before it (" + frames + " so far)");
                }
                continue;
            }
            if (c == PayloadCodec.ZSTD_FRAME) {
                if (frames >= frameBlocks.length || frameOrdinals[i] != frames || frameBlocks[frames] != i) {
                    throw new IllegalArgumentException("block " + i + ": zstd frame out of order in the per-frame arrays");
                }
                int m = frameMembers[frames];
                if (m < 1 || m > ProtocolLimits.MAX_FRAME_MEMBERS || memberIndexes[i] < 0 || memberIndexes[i] >= m) {
                    throw new IllegalArgumentException("block " + i + ": member " + memberIndexes[i] + " of a frame of " + m
                            + " members (1.." + ProtocolLimits.MAX_FRAME_MEMBERS + ")");
                }
                frames++;
            }
            if (lengths[i] < 1 || lengths[i] > ProtocolLimits.MAX_PAYLOAD) {
                throw new IllegalArgumentException("block " + i + ": payload length " + lengths[i] + " outside 1.." + ProtocolLimits.MAX_PAYLOAD);
            }
            if (offsets[i] < 0 || offsets[i] > data.writerIndex() - lengths[i]) {
                throw new IllegalArgumentException("block " + i + ": payload outside data");
            }
        }
        if (frames != frameBlocks.length) {
            throw new IllegalArgumentException(frameBlocks.length + " frames listed, " + frames + " sent");
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

    /** Member index of block {@code i} in its compressed frame (0 unless its codec is a frame codec). */
    public int memberIndex(int i) {
        return memberIndexes[i];
    }

    /** Block index of the {@link PayloadCodec#ZSTD_FRAME} block carrying block {@code i}'s frame (frame codecs only). */
    public int frameBlock(int i) {
        return frameBlocks[frameOrdinals[i]];
    }

    /** Members of block {@code i}'s compressed frame (frame codecs only). */
    public int frameMemberCount(int i) {
        return frameMembers[frameOrdinals[i]];
    }

    /** Body bytes of this message on the wire (without length, version, type). */
    public long bodyBytes() {
        long n = 8 + 4;
        for (int i = 0; i < count; i++) {
            n += switch (codecs[i]) {
                case PayloadCodec.ZERO -> 1;
                case PayloadCodec.ZSTD_FRAME -> FRAME_HEADER_BYTES + lengths[i];
                case PayloadCodec.FRAME_MEMBER -> MEMBER_BYTES;
                default -> 1 + Fingerprint.BYTES + 4 + lengths[i];
            };
        }
        return n;
    }

    @Override
    public MessageType type() {
        return MessageType.RESTORE_DATA;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RestoreData r) || r.startLbn != startLbn || r.count != count || !Arrays.equals(r.codecs, codecs)
                || !Arrays.equals(r.fingerprints, fingerprints) || !Arrays.equals(r.lengths, lengths)
                || !Arrays.equals(r.memberIndexes, memberIndexes) || !Arrays.equals(r.frameOrdinals, frameOrdinals)
                || !Arrays.equals(r.frameMembers, frameMembers)) {
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
        private final PayloadBuffer payloads;
        private final long startLbn;
        private final byte[] codecs = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final byte[] fingerprints = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME * Fingerprint.BYTES];
        private final int[] offsets = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final int[] lengths = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final int[] memberIndexes = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final int[] frameOrdinals = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
        private final int[] frameBlocks = new int[ProtocolLimits.MAX_FRAMES_PER_MESSAGE];
        private final int[] frameMembers = new int[ProtocolLimits.MAX_FRAMES_PER_MESSAGE];
        private int count;
        private int frames;

        private Builder(ByteBufAllocator alloc, long startLbn, int expectedPayloadBytes) {
            this.payloads = new PayloadBuffer(alloc, expectedPayloadBytes);
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
            return payloads.payloadBytes();
        }

        /** True if one more payload of {@code length} bytes keeps the frame within the limits. */
        public boolean fits(int length) {
            return payloads.fits(count + 1, length);
        }

        /** Adds a zero block. */
        public Builder addZero() {
            checkOpen(0);
            codecs[count] = PayloadCodec.ZERO;
            offsets[count] = 0;
            lengths[count] = 0;
            memberIndexes[count] = 0;
            frameOrdinals[count] = 0;
            count++;
            return this;
        }

        /**
         * Adds a block that is member {@code member} of a stored compressed frame of {@code members}
         * blocks, sending the frame's {@code len} bytes of {@code src} at {@code off} (protocol 4; the
         * first time this frame appears in this message). Returns the frame's ordinal, which later
         * blocks of the same frame pass to {@link #addFrameMember}.
         */
        public int addFrame(byte[] fp, int fpOff, int member, int members, byte[] src, int off, int len) {
            if (members < 1 || members > ProtocolLimits.MAX_FRAME_MEMBERS || member < 0 || member >= members) {
                throw new IllegalArgumentException("member " + member + " of a frame of " + members + " blocks");
            }
            if (frames >= ProtocolLimits.MAX_FRAMES_PER_MESSAGE) {
                throw new IllegalStateException("RESTORE_DATA frame holds " + frames + " compressed frames already");
            }
            ByteBuf data = checkOpen(len);
            place(data, PayloadCodec.ZSTD_FRAME, fp, fpOff, len);
            data.writeBytes(src, off, len);
            int ordinal = frames++;
            frameBlocks[ordinal] = count;
            frameMembers[ordinal] = members;
            memberIndexes[count] = member;
            frameOrdinals[count] = ordinal;
            count++;
            return ordinal;
        }

        /**
         * Adds a block that is member {@code member} of the frame {@link #addFrame} returned
         * {@code ordinal} for in this message (no payload travels again).
         */
        public Builder addFrameMember(byte[] fp, int fpOff, int member, int ordinal) {
            checkOpen(0);
            if (ordinal < 0 || ordinal >= frames || member < 0 || member >= frameMembers[ordinal]) {
                throw new IllegalArgumentException("member " + member + " of frame " + ordinal + ": no such frame or member in this message");
            }
            System.arraycopy(fp, fpOff, fingerprints, count * Fingerprint.BYTES, Fingerprint.BYTES);
            codecs[count] = PayloadCodec.FRAME_MEMBER;
            offsets[count] = 0;
            lengths[count] = 0;
            memberIndexes[count] = member;
            frameOrdinals[count] = ordinal;
            count++;
            return this;
        }

        /** Adds a block: its fingerprint (32 bytes of {@code fp} at {@code fpOff}) and payload bytes. */
        public Builder add(int codec, byte[] fp, int fpOff, byte[] src, int off, int len) {
            begin(codec, fp, fpOff, len).writeBytes(src, off, len);
            count++;
            return this;
        }

        /** Adds a block whose payload is {@code len} bytes of {@code src} at absolute index {@code index}. */
        public Builder add(int codec, byte[] fp, int fpOff, ByteBuf src, int index, int len) {
            begin(codec, fp, fpOff, len).writeBytes(src, index, len);
            count++;
            return this;
        }

        private ByteBuf checkOpen(int len) {
            return payloads.room("RESTORE_DATA", count, len);
        }

        /** Records block {@code count}'s header; returns the buffer its payload goes to. */
        private ByteBuf begin(int codec, byte[] fp, int fpOff, int len) {
            ByteBuf data = checkOpen(len);
            if (codec != PayloadCodec.RAW && codec != PayloadCodec.ZSTD) {
                throw new IllegalArgumentException("codec " + PayloadCodec.name(codec) + " needs addZero, addFrame or a payload codec");
            }
            place(data, codec, fp, fpOff, len);
            return data;
        }

        private void place(ByteBuf data, int codec, byte[] fp, int fpOff, int len) {
            System.arraycopy(fp, fpOff, fingerprints, count * Fingerprint.BYTES, Fingerprint.BYTES);
            codecs[count] = (byte) codec;
            offsets[count] = data.writerIndex();
            lengths[count] = len;
            memberIndexes[count] = 0;
            frameOrdinals[count] = 0;
        }

        /** The message; ownership of the buffer moves to it. */
        public RestoreData build() {
            return payloads.build(d -> new RestoreData(startLbn, count, Arrays.copyOf(codecs, count),
                    Arrays.copyOf(fingerprints, count * Fingerprint.BYTES), Arrays.copyOf(offsets, count),
                    Arrays.copyOf(lengths, count), d, Arrays.copyOf(memberIndexes, count), Arrays.copyOf(frameOrdinals, count),
                    Arrays.copyOf(frameBlocks, frames), Arrays.copyOf(frameMembers, frames)));
        }

        @Override
        public void close() {
            payloads.close();
        }
    }
}
