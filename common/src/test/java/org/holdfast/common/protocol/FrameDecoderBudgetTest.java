package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The decoder's memory bounds: the limit before HELLO is accepted and the reservation of every frame from a {@link FrameBudget}. */
class FrameDecoderBudgetTest {
    private static final int BEFORE_HELLO = 64 * 1024;

    private final TrackingAllocator alloc = new TrackingAllocator();
    private final FrameDecoder decoder = new FrameDecoder();
    private final CountingBudget budget = new CountingBudget();
    private final EmbeddedChannel ch;

    FrameDecoderBudgetTest() {
        decoder.holdAfterHello();
        decoder.limitBeforeHello(BEFORE_HELLO);
        decoder.budget(budget);
        ch = new EmbeddedChannel(decoder);
        ch.config().setAllocator(alloc);
    }

    @AfterEach
    void noLeaks() {
        ch.finishAndReleaseAll();
        alloc.assertAllReleased();
        assertThat(budget.reserved).as("every reservation given back or handed to a consumer that released it").isZero();
    }

    private ByteBuf frame(Message m) {
        ByteBuf b = alloc.buffer();
        FrameEncoder.write(m, b);
        return b;
    }

    /** Takes the next decoded message and gives back its reservation, as the server's handler does. */
    private Object consume() {
        Object m = ch.readInbound();
        if (m != null) {
            budget.release(decoder.lastFrameBytes());
            io.netty.util.ReferenceCountUtil.release(m);
        }
        return m;
    }

    @Test
    void decode_largeFrameHeaderBeforeHello_limitExceededWithoutBuffering() {
        ByteBuf header = alloc.buffer().writeInt(ProtocolLimits.MAX_FRAME).writeByte(ProtocolLimits.VERSION)
                .writeByte(MessageType.BLOCKS.code());
        assertThatThrownBy(() -> ch.writeInbound(header))
                .isInstanceOfSatisfying(ProtocolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
                    assertThat(e.getMessage()).contains("before the HELLO was accepted");
                });
        assertThat(alloc.largest()).isLessThan(1024);
        assertThat(decoder.isFailed()).isTrue();
    }

    @Test
    void decode_junkBehindHelloOverTheLimit_limitExceeded() {
        assertThat(ch.writeInbound(frame(Hello.of("a", "t")))).isTrue();
        consume();
        ByteBuf junk = alloc.buffer().writeZero(BEFORE_HELLO + 1);
        assertThatThrownBy(() -> ch.writeInbound(junk))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED));
    }

    @Test
    void decode_largeFrameAfterHelloAccepted_decoded() {
        ch.writeInbound(frame(Hello.of("a", "t")));
        consume();
        decoder.resume(ch.pipeline().context(decoder));
        ByteBuf entries = frame(new Entries(0, ProtocolLimits.MAX_RUN_ENTRIES, new byte[ProtocolLimits.MAX_RUN_ENTRIES * 32],
                new long[ProtocolLimits.MAX_RUN_ENTRIES]));
        int size = entries.readableBytes();
        assertThat(size).isGreaterThan(BEFORE_HELLO);
        assertThat(ch.writeInbound(entries)).isTrue();
        assertThat(decoder.lastFrameBytes()).isEqualTo(size);
        assertThat(consume()).isInstanceOf(Entries.class);
    }

    @Test
    void decode_bigBlocksFramesInSmallReads_decodedWhole_evenWhileTheLastOneIsStillHeld() {
        ch.writeInbound(frame(Hello.of("a", "t")));
        consume();
        decoder.resume(ch.pipeline().context(decoder));
        decoder.blockSize(4096);
        byte[] payload = new byte[4096];
        Blocks.Builder a = Blocks.builder(alloc, 0);
        Blocks.Builder b = Blocks.builder(alloc, 0);
        for (int i = 0; i < 200; i++) { // ~800 KiB each: the cumulation grows to a frame at once
            java.util.Arrays.fill(payload, (byte) i);
            a.add(i, PayloadCodec.RAW, payload, 0, 4096);
            b.add(1000 + i, PayloadCodec.RAW, payload, 0, 4096);
        }
        ByteBuf wire = alloc.buffer();
        for (Blocks m : new Blocks[] {a.build(), b.build()}) {
            FrameEncoder.write(m, wire);
            m.release();
        }
        java.util.List<Blocks> got = new java.util.ArrayList<>(); // held, not released, while the next bytes arrive
        while (wire.isReadable()) {
            ch.writeInbound(wire.readRetainedSlice(Math.min(65536 - 7, wire.readableBytes())));
            for (Object m; (m = ch.readInbound()) != null; ) {
                got.add((Blocks) m);
            }
        }
        wire.release();
        assertThat(got).hasSize(2);
        byte[] out = new byte[4096];
        for (int k = 0; k < 2; k++) {
            Blocks m = got.get(k);
            assertThat(m.count()).isEqualTo(200);
            for (int i = 0; i < 200; i += 37) {
                m.copyPayload(i, out, 0);
                assertThat(out[0]).isEqualTo((byte) i);
                assertThat(out[4095]).isEqualTo((byte) i);
                assertThat(m.lbns()[i]).isEqualTo(k * 1000 + i);
            }
        }
        for (Blocks m : got) {
            budget.release(FrameEncoder.frameBytes(m));
            m.release();
        }
    }

    @Test
    void decode_bigFrameHeaderOnly_growsTheBufferToTheReservedSizeNotTheNextPowerOfTwo() {
        ch.writeInbound(frame(Hello.of("a", "t")));
        consume();
        decoder.resume(ch.pipeline().context(decoder));
        int frameBytes = 2 * 1024 * 1024 + 64 * 1024; // a hostile peer claims it and sends nothing more
        ByteBuf header = alloc.buffer().writeInt(frameBytes - ProtocolLimits.LENGTH_FIELD_BYTES)
                .writeByte(ProtocolLimits.VERSION).writeByte(MessageType.BLOCKS.code()).writeInt(1);
        assertThat(ch.writeInbound(header)).isFalse();
        assertThat(budget.reserved).isEqualTo(frameBytes);
        assertThat(alloc.outstanding()).as("memory held for a reservation of %d bytes", frameBytes)
                .isBetween((long) frameBytes, (long) frameBytes + 1024);
    }

    @Test
    void decode_budgetRefuses_waitsConsumingNothingThenRetryDecodes() {
        ch.writeInbound(frame(Hello.of("a", "t")));
        consume();
        decoder.resume(ch.pipeline().context(decoder));
        budget.room = 10; // less than any frame
        ByteBuf commit = frame(new Commit(7));
        int size = commit.readableBytes();
        assertThat(ch.writeInbound(commit)).isFalse();
        assertThat(decoder.isWaitingForBudget()).isTrue();
        assertThat(budget.reserved).isZero();
        budget.room = Long.MAX_VALUE;
        decoder.retry(ch.pipeline().context(decoder));
        assertThat(decoder.isWaitingForBudget()).isFalse();
        assertThat(decoder.lastFrameBytes()).isEqualTo(size);
        assertThat(budget.reserved).isEqualTo(size);
        assertThat(((Commit) ch.readInbound()).volumeBytes()).isEqualTo(7);
        budget.release(size);
    }

    @Test
    void decode_frameCutOffByClose_reservationReleased() {
        ch.writeInbound(frame(Hello.of("a", "t")));
        consume();
        decoder.resume(ch.pipeline().context(decoder));
        ByteBuf header = alloc.buffer().writeInt(1 << 20).writeByte(ProtocolLimits.VERSION).writeByte(MessageType.BLOCKS.code())
                .writeZero(1000);
        assertThat(ch.writeInbound(header)).isFalse();
        assertThat(decoder.partialFrameBytes()).isEqualTo(4 + (1 << 20));
        assertThat(budget.reserved).as("the whole frame is reserved, nothing of it allocated").isEqualTo(4 + (1 << 20));
        assertThat(alloc.largest()).isLessThan(64 * 1024);
        ch.close();
        assertThat(budget.reserved).isZero();
    }

    @Test
    void discardInput_partialFrameReserved_reservationGivenBackAndLaterBytesNeitherBufferedNorReserved() {
        ch.writeInbound(frame(Hello.of("a", "t")));
        consume();
        decoder.resume(ch.pipeline().context(decoder));
        ByteBuf header = alloc.buffer().writeInt(1 << 20).writeByte(ProtocolLimits.VERSION).writeByte(MessageType.BLOCKS.code())
                .writeZero(1000);
        ch.writeInbound(header);
        assertThat(budget.reserved).isEqualTo(4 + (1 << 20));
        decoder.discardInput(); // a refusal from the handler (ErrorLinger): the rest of the connection is drained
        assertThat(budget.reserved).isZero();
        assertThat(decoder.partialFrameBytes()).isZero();
        for (int i = 0; i < 64; i++) { // 4 MiB more, and a whole frame: all dropped as it comes
            assertThat(ch.writeInbound(alloc.buffer().writeZero(64 * 1024))).isFalse();
        }
        assertThat(ch.writeInbound(frame(new Commit(7)))).as("no frame decoded after the refusal").isFalse();
        assertThat(budget.reserved).isZero();
        assertThat(alloc.outstanding()).as("nothing buffered: each read's bytes are released once skipped").isZero();
        assertThat(decoder.wantsNoInput()).as("a draining decoder wants all input").isFalse();
    }

    @Test
    void discardInput_whileAHelloIsHeld_letsReadingGoOnAndDropsWhatWasHeld() {
        ch.writeInbound(frame(Hello.of("a", "t")));
        consume();
        ch.writeInbound(frame(new Commit(7))); // held unparsed behind the HELLO
        assertThat(decoder.wantsNoInput()).isTrue();
        decoder.discardInput(); // the token was refused
        assertThat(decoder.wantsNoInput()).isFalse();
        assertThat(decoder.isFailed()).isTrue();
        assertThat(ch.writeInbound(alloc.buffer().writeZero(1000))).isFalse();
        assertThat((Object) ch.readInbound()).as("the held frame is dropped, never decoded").isNull();
        assertThat(alloc.outstanding()).as("the held bytes are let go at the next read").isZero();
    }

    private static final class CountingBudget implements FrameBudget {
        long room = Long.MAX_VALUE;
        long reserved;

        @Override
        public boolean tryReserve(int frameBytes) {
            if (reserved + frameBytes > room) {
                return false;
            }
            reserved += frameBytes;
            return true;
        }

        @Override
        public void release(int frameBytes) {
            reserved -= frameBytes;
        }
    }
}
