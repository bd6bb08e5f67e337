package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FrameRoundTripTest {
    private final TrackingAllocator alloc = new TrackingAllocator();

    private EmbeddedChannel encoderChannel() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameEncoder());
        ch.config().setAllocator(alloc);
        return ch;
    }

    private EmbeddedChannel decoderChannel() {
        FrameDecoder decoder = new FrameDecoder();
        decoder.protocolVersion(ProtocolLimits.PROTOCOL_VERSION); // the samples include the newest version's fields
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        ch.config().setAllocator(alloc);
        return ch;
    }

    private ByteBuf encode(Message m) {
        EmbeddedChannel enc = encoderChannel();
        ReferenceCountUtil.retain(m); // the encoder releases what it writes; we still compare against m
        enc.writeOutbound(m);
        ByteBuf frame = enc.readOutbound();
        assertThat(enc.finish()).isFalse();
        return frame;
    }

    @Test
    void encodeDecode_everyMessageType_roundTripsEqual() {
        List<Message> samples = Samples.all(alloc);
        Set<MessageType> seen = EnumSet.noneOf(MessageType.class);
        for (Message m : samples) {
            ByteBuf frame = encode(m);
            assertThat(frame.readableBytes()).as("exact size of %s", m.type()).isEqualTo(FrameEncoder.frameBytes(m));
            if (!(m instanceof Blocks b && b.isFramed())) { // a framed BLOCKS goes out in its builder's buffer
                assertThat(frame.capacity()).as("buffer sized exactly for %s", m.type()).isEqualTo(frame.readableBytes());
            }
            EmbeddedChannel dec = decoderChannel();
            dec.writeInbound(frame);
            Message back = dec.readInbound();
            assertThat(back).as("decoded %s", m.type()).isEqualTo(m);
            assertThat(back.type()).isEqualTo(m.type());
            seen.add(back.type());
            ReferenceCountUtil.release(back);
            ReferenceCountUtil.release(m);
            assertThat(dec.finish()).isFalse();
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(EnumSet.allOf(MessageType.class));
        alloc.assertAllReleased();
    }

    @Test
    void decode_framesSplitIntoSingleBytes_decodesAllInOrder() {
        List<Message> samples = Samples.all(alloc);
        CompositeByteBuf stream = alloc.compositeBuffer(samples.size());
        for (Message m : samples) {
            stream.addComponent(true, encode(m));
        }
        EmbeddedChannel dec = decoderChannel();
        List<Message> decoded = new ArrayList<>();
        // Feed in odd-sized pieces, including single bytes, to exercise every "not complete yet" path.
        int piece = 1;
        while (stream.isReadable()) {
            int n = Math.min(piece, stream.readableBytes());
            dec.writeInbound(stream.readRetainedSlice(n));
            piece = piece >= 7919 ? 1 : piece * 3 + 1;
            for (Object o; (o = dec.readInbound()) != null; ) {
                decoded.add((Message) o);
            }
        }
        stream.release();
        assertThat(decoded).containsExactlyElementsOf(samples);
        decoded.forEach(ReferenceCountUtil::release);
        samples.forEach(ReferenceCountUtil::release);
        assertThat(dec.finish()).isFalse();
        alloc.assertAllReleased();
    }

    @Test
    void decode_blocksPayload_isSliceOfFrameWithCorrectBytes() {
        byte[] payload = new byte[4096];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 31);
        }
        Blocks sent = Blocks.builder(alloc, 8192).add(1, PayloadCodec.RAW, payload, 0, 4096)
                .add(2, PayloadCodec.ZSTD, payload, 10, 20).build();
        EmbeddedChannel dec = decoderChannel();
        ((FrameDecoder) dec.pipeline().first()).blockSize(4096);
        dec.writeInbound(encode(sent));
        sent.release();
        Blocks got = dec.readInbound();
        byte[] out = new byte[4096];
        assertThat(got.copyPayload(0, out, 0)).isEqualTo(4096);
        assertThat(out).isEqualTo(payload);
        assertThat(got.copyPayload(1, out, 0)).isEqualTo(20);
        assertThat(java.util.Arrays.copyOf(out, 20)).isEqualTo(java.util.Arrays.copyOfRange(payload, 10, 30));
        assertThat(got.lbns()).containsExactly(1, 2);
        assertThat(got.release()).isTrue();
        assertThat(dec.finish()).isFalse();
        alloc.assertAllReleased();
    }

    @Test
    void builder_filledWithLargestBlocks_staysUnderMaxFrame() {
        byte[] payload = new byte[ProtocolLimits.MAX_BLOCK_SIZE];
        Blocks.Builder b = Blocks.builder(alloc, 0);
        int added = 0;
        while (b.fits(payload.length)) {
            b.add(added++, PayloadCodec.RAW, payload, 0, payload.length);
        }
        Blocks blocks = b.build();
        assertThat(FrameEncoder.frameBytes(blocks)).isLessThanOrEqualTo(ProtocolLimits.MAX_FRAME + 4);
        blocks.release();
        assertThat(added).isEqualTo(15);
    }

    @Test
    void frameBytes_bodyOverMaxFrame_throwsLimitExceeded() {
        ByteBuf one = alloc.buffer(ProtocolLimits.MAX_PAYLOAD).writeZero(ProtocolLimits.MAX_PAYLOAD);
        int n = 20;
        byte[] codecs = new byte[n];
        java.util.Arrays.fill(codecs, (byte) PayloadCodec.ZSTD);
        Blocks huge = new Blocks(n, new long[n], codecs, new int[n], filled(n, ProtocolLimits.MAX_PAYLOAD), one);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FrameEncoder.frameBytes(huge))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED));
        EmbeddedChannel enc = encoderChannel();
        assertThatThrownBy(() -> enc.writeOutbound(huge)).hasRootCauseInstanceOf(ProtocolException.class);
        assertThat(huge.refCnt()).as("encoder released the message it could not write").isZero();
        alloc.assertAllReleased();
    }

    private static int[] filled(int n, int v) {
        int[] a = new int[n];
        java.util.Arrays.fill(a, v);
        return a;
    }

    @Test
    void need_bitsSetAndCounted_matchSetCalls() {
        byte[] bitmap = new byte[Need.bitmapBytes(20)];
        Need.set(bitmap, 3);
        Need.set(bitmap, 19);
        Need n = new Need(0, 20, bitmap);
        assertThat(n.isNeeded(3)).isTrue();
        assertThat(n.isNeeded(19)).isTrue();
        assertThat(n.isNeeded(4)).isFalse();
        assertThat(n.neededCount()).isEqualTo(2);
        assertThat(bitmap[0]).isEqualTo((byte) 0x08);
    }

    @Test
    void entries_zeroFingerprint_isZero() {
        byte[] fps = new byte[64];
        fps[5] = 1;
        Entries e = new Entries(10, 2, fps, new long[2]);
        assertThat(e.isZero(0)).isFalse();
        assertThat(e.isZero(1)).isTrue();
        assertThat(e.lbn(1)).isEqualTo(11);
    }

    @Test
    void errorMessage_longText_isTruncatedToLimit() {
        ErrorMessage m = ErrorMessage.of(ErrorCode.INTERNAL, "é".repeat(2000));
        assertThat(m.message().getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                .isLessThanOrEqualTo(ProtocolLimits.MAX_ERROR_MESSAGE);
        assertThat(m.message()).startsWith("éé");
    }
}
