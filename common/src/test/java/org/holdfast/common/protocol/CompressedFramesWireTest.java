package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Protocol 4's compressed frames in BLOCKS and RESTORE_DATA: round trips, version gating, malformed input. */
class CompressedFramesWireTest {
    private static final int BS = 4096;
    private final TrackingAllocator alloc = new TrackingAllocator();
    private FrameDecoder decoder = new FrameDecoder();
    private EmbeddedChannel ch = new EmbeddedChannel(decoder);

    {
        ch.config().setAllocator(alloc);
    }

    @AfterEach
    void noLeaks() {
        ch.finishAndReleaseAll();
        alloc.assertAllReleased();
    }

    private static byte[] fp(int seed) {
        byte[] f = new byte[32];
        Arrays.fill(f, (byte) seed);
        return f;
    }

    private Object roundTrip(Message m, int version, int blockSize) {
        decoder.protocolVersion(version);
        decoder.blockSize(blockSize);
        ByteBuf out = alloc.buffer();
        FrameEncoder.write(m, out);
        io.netty.util.ReferenceCountUtil.release(m);
        ch.writeInbound(out);
        return ch.readInbound();
    }

    private Blocks framedBlocks() {
        byte[] frame = {1, 2, 3, 4, 5, 6, 7};
        Blocks.Builder b = Blocks.builder(alloc, 64);
        b.add(9, PayloadCodec.RAW, new byte[BS], 0, BS);
        b.addFrame(10, frame, 0, frame.length).addFrameMember(11).addFrameMember(13);
        b.add(14, PayloadCodec.ZSTD, frame, 0, 3);
        return b.build();
    }

    @Test
    void blocks_withFrame_roundTripsOnVersion4() {
        Blocks sent = framedBlocks();
        Blocks expected = sent.retain();
        Blocks got = (Blocks) roundTrip(sent, 4, BS);
        try {
            assertThat(got).isEqualTo(expected);
            assertThat(got.codecs()).containsExactly(PayloadCodec.RAW, PayloadCodec.ZSTD_FRAME, PayloadCodec.FRAME_MEMBER,
                    PayloadCodec.FRAME_MEMBER, PayloadCodec.ZSTD);
            assertThat(got.frameMembers(1)).isEqualTo(3);
            assertThat(got.lengths()[2]).isZero();
        } finally {
            got.release();
            expected.release();
        }
    }

    @Test
    void blocks_withFrame_onVersion3_refusedNamingTheVersion() {
        assertThatThrownBy(() -> roundTrip(framedBlocks(), 3, BS))
                .isInstanceOfSatisfying(ProtocolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
                    assertThat(e.getMessage()).contains("LBN 10").contains("protocol version 4").contains("agreed on version 3");
                });
        assertThat(decoder.isFailed()).isTrue();
    }

    @Test
    void blocks_withFrame_beforeNegotiation_refused() {
        assertThatThrownBy(() -> roundTrip(framedBlocks(), 0, 0)).isInstanceOf(ProtocolException.class);
    }

    @Test
    void restoreData_withFrames_roundTripsAndResolvesOrdinals() {
        byte[] a = {9, 9, 9};
        byte[] c = {7, 7, 7, 7, 7};
        RestoreData.Builder b = RestoreData.builder(alloc, 100, 64);
        b.addZero();
        int o0 = b.addFrame(fp(1), 0, 2, 4, a, 0, a.length);
        b.addFrameMember(fp(2), 0, 0, o0);
        b.add(PayloadCodec.ZSTD, fp(3), 0, c, 0, 2);
        int o1 = b.addFrame(fp(4), 0, 0, 2, c, 0, c.length);
        b.addFrameMember(fp(5), 0, 3, o0).addFrameMember(fp(6), 0, 1, o1).addFrameMember(fp(2), 0, 0, o0);
        assertThat(o0).isZero();
        assertThat(o1).isEqualTo(1);
        RestoreData sent = b.build();
        RestoreData expected = sent.retain();
        RestoreData got = (RestoreData) roundTrip(sent, 4, BS);
        try {
            assertThat(got).isEqualTo(expected);
            assertThat(got.bodyBytes()).isEqualTo(expected.bodyBytes());
            assertThat(got.frameBlock(5)).isEqualTo(1);
            assertThat(got.memberIndex(5)).isEqualTo(3);
            assertThat(got.frameMemberCount(5)).isEqualTo(4);
            assertThat(got.frameBlock(6)).isEqualTo(4);
            assertThat(got.frameBlock(4)).isEqualTo(4);
            assertThat(got.lengths()[1]).isEqualTo(3);
        } finally {
            got.release();
            expected.release();
        }
    }

    @Test
    void restoreData_withFrame_onVersion3_refused() {
        RestoreData.Builder b = RestoreData.builder(alloc, 0, 16);
        b.addFrame(fp(1), 0, 0, 2, new byte[] {1}, 0, 1);
        RestoreData d = b.build();
        assertThatThrownBy(() -> roundTrip(d, 3, BS))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.getMessage()).contains("protocol version 4"));
    }

    // ---- malformed input, built byte by byte --------------------------------------------------

    private ByteBuf frame(MessageType type, Consumer<ByteBuf> body) {
        ByteBuf bb = alloc.buffer();
        body.accept(bb);
        ByteBuf f = alloc.buffer();
        f.writeInt(2 + bb.readableBytes()).writeByte(ProtocolLimits.VERSION).writeByte(type.code()).writeBytes(bb);
        bb.release();
        return f;
    }

    private static void entry(ByteBuf b, long lbn, int codec, int len) {
        b.writeLong(lbn).writeByte(codec).writeInt(len).writeZero(len);
    }

    private void assertRefused(ByteBuf input, ErrorCode code, String text) {
        decoder.protocolVersion(4);
        decoder.blockSize(BS);
        assertThatThrownBy(() -> ch.writeInbound(input)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.code()).isEqualTo(code);
            assertThat(e.getMessage()).contains(text);
        });
        assertThat(decoder.isFailed()).isTrue();
        assertThat(alloc.largest()).as("nothing sized by a hostile length").isLessThan(2 * ProtocolLimits.MAX_PAYLOAD);
    }

    @Test
    void blocks_memberWithoutFrame_refused() {
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(2);
            entry(b, 1, PayloadCodec.RAW, BS);
            entry(b, 2, PayloadCodec.FRAME_MEMBER, 0);
        }), ErrorCode.BAD_FRAME, "without a zstd frame before it");
    }

    @Test
    void blocks_frameWithOneMember_refused() {
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(2);
            entry(b, 5, PayloadCodec.ZSTD_FRAME, 10);
            entry(b, 6, PayloadCodec.RAW, BS);
        }), ErrorCode.BAD_FRAME, "LBN 5");
    }

    @Test
    void blocks_frameAtEndWithOneMember_refused() {
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(1);
            entry(b, 5, PayloadCodec.ZSTD_FRAME, 10);
        }), ErrorCode.BAD_FRAME, "2 or more blocks");
    }

    @Test
    void blocks_frameOverOneMiBRaw_refused() {
        int members = ProtocolLimits.FRAME_MAX_RAW / BS + 1;
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(members);
            entry(b, 0, PayloadCodec.ZSTD_FRAME, 100);
            for (int k = 1; k < members; k++) {
                entry(b, k, PayloadCodec.FRAME_MEMBER, 0);
            }
        }), ErrorCode.LIMIT_EXCEEDED, "holds " + members + " blocks");
    }

    @Test
    void blocks_framePayloadOverItsMembers_refused() {
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(2);
            entry(b, 0, PayloadCodec.ZSTD_FRAME, 2 * BS + ProtocolLimits.ZSTD_SLACK + 1);
            entry(b, 1, PayloadCodec.FRAME_MEMBER, 0);
        }), ErrorCode.LIMIT_EXCEEDED, "for 2 blocks");
    }

    @Test
    void blocks_frameLengthZero_refused() {
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(2);
            entry(b, 0, PayloadCodec.ZSTD_FRAME, 0);
            entry(b, 1, PayloadCodec.FRAME_MEMBER, 0);
        }), ErrorCode.BAD_FRAME, "length 0");
    }

    @Test
    void blocks_memberWithPayload_refused() {
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(2);
            entry(b, 0, PayloadCodec.ZSTD_FRAME, 5);
            entry(b, 1, PayloadCodec.FRAME_MEMBER, 5);
        }), ErrorCode.BAD_FRAME, "carries no payload");
    }

    @Test
    void blocks_hostileFrameLength_refusedBeforeAllocating() {
        assertRefused(frame(MessageType.BLOCKS, b -> {
            b.writeInt(2);
            b.writeLong(0).writeByte(PayloadCodec.ZSTD_FRAME).writeInt(0x7fffffff);
        }), ErrorCode.LIMIT_EXCEEDED, "over its limit");
    }

    private static void restoreFrame(ByteBuf b, int member, int members, int len) {
        b.writeByte(PayloadCodec.ZSTD_FRAME).writeBytes(fp(1)).writeShort(member).writeShort(members).writeInt(len).writeZero(len);
    }

    @Test
    void restoreData_ordinalOutOfRange_refused() {
        assertRefused(frame(MessageType.RESTORE_DATA, b -> {
            b.writeLong(50).writeInt(2);
            restoreFrame(b, 0, 2, 8);
            b.writeByte(PayloadCodec.FRAME_MEMBER).writeBytes(fp(2)).writeShort(1).writeShort(1);
        }), ErrorCode.BAD_FRAME, "LBN 51");
    }

    @Test
    void restoreData_memberIndexNotBelowMembers_refused() {
        assertRefused(frame(MessageType.RESTORE_DATA, b -> {
            b.writeLong(50).writeInt(2);
            restoreFrame(b, 0, 2, 8);
            b.writeByte(PayloadCodec.FRAME_MEMBER).writeBytes(fp(2)).writeShort(2).writeShort(0);
        }), ErrorCode.BAD_FRAME, "member 2 of frame 0");
    }

    @Test
    void restoreData_frameMemberIndexNotBelowMembers_refused() {
        assertRefused(frame(MessageType.RESTORE_DATA, b -> {
            b.writeLong(50).writeInt(1);
            restoreFrame(b, 3, 3, 8);
        }), ErrorCode.BAD_FRAME, "member 3 of a frame of 3");
    }

    @Test
    void restoreData_frameOverOneMiBRaw_refused() {
        assertRefused(frame(MessageType.RESTORE_DATA, b -> {
            b.writeLong(0).writeInt(1);
            restoreFrame(b, 0, ProtocolLimits.FRAME_MAX_RAW / BS + 1, 8);
        }), ErrorCode.LIMIT_EXCEEDED, "raw bytes");
    }

    @Test
    void restoreData_frameLengthZero_refused() {
        assertRefused(frame(MessageType.RESTORE_DATA, b -> {
            b.writeLong(0).writeInt(1);
            restoreFrame(b, 0, 2, 0);
        }), ErrorCode.BAD_FRAME, "length 0");
    }

    @Test
    void restoreData_hostileFrameLength_refusedBeforeAllocating() {
        assertRefused(frame(MessageType.RESTORE_DATA, b -> {
            b.writeLong(0).writeInt(1);
            b.writeByte(PayloadCodec.ZSTD_FRAME).writeBytes(fp(1)).writeShort(0).writeShort(2).writeInt(-1);
        }), ErrorCode.LIMIT_EXCEEDED, "over");
    }

    @Test
    void builders_refuseMisuse() {
        try (Blocks.Builder b = Blocks.builder(alloc, 16)) {
            assertThatThrownBy(() -> b.addFrameMember(1)).isInstanceOf(IllegalStateException.class);
            b.addFrame(1, new byte[] {1}, 0, 1);
            assertThatThrownBy(b::build).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("frame-member");
        }
        try (RestoreData.Builder r = RestoreData.builder(alloc, 0, 16)) {
            assertThatThrownBy(() -> r.addFrameMember(fp(1), 0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> r.addFrame(fp(1), 0, 2, 2, new byte[1], 0, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> r.add(PayloadCodec.ZSTD_FRAME, fp(1), 0, new byte[1], 0, 1))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
