package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The linger after a refusal, on an embedded channel with a virtual clock: the ERROR, then draining, then the close. */
class ErrorLingerTest {
    private final FrameDecoder decoder = new FrameDecoder();
    private final EmbeddedChannel ch = new EmbeddedChannel(decoder, new FrameEncoder());

    private ErrorMessage written() {
        ByteBuf frame = ch.readOutbound();
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound(frame);
        return decode.readInbound();
    }

    @Test
    void sendAndClose_peerKeepsWriting_openUntilTheLingerThenClosed() {
        ch.freezeTime(); // only advanceTimeBy moves the clock
        ErrorLinger.sendAndClose(ch, ErrorMessage.of(ErrorCode.BAD_FRAME, "bad"), 60_000);
        assertThat(written().message()).isEqualTo("bad");
        assertThat(ErrorLinger.isLingering(ch)).isTrue();
        long step = ErrorLinger.QUIET_MILLIS / 2;
        for (long t = 0; t + step < ErrorLinger.ERROR_LINGER_MILLIS; t += step) {
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[4096])); // still writing its refused frame
            ch.advanceTimeBy(step, TimeUnit.MILLISECONDS);
            ch.runScheduledPendingTasks();
            assertThat(ch.isOpen()).as("still draining at %d ms", t + step).isTrue();
        }
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[4096]));
        ch.advanceTimeBy(ErrorLinger.ERROR_LINGER_MILLIS, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).as("cut off at the linger although it writes on").isFalse();
        assertThat(decoder.discardedBytes()).isGreaterThan(4096L * 6);
    }

    @Test
    void sendAndClose_peerStopsWriting_closedAfterTheQuietTime() {
        ch.freezeTime();
        ErrorLinger.sendAndClose(ch, ErrorMessage.of(ErrorCode.BAD_FRAME, "bad"), 60_000);
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[4096]));
        ch.advanceTimeBy(ErrorLinger.QUIET_MILLIS, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).as("bytes came in the first quiet period").isTrue();
        ch.advanceTimeBy(ErrorLinger.QUIET_MILLIS - 1, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).as("not yet a whole quiet period").isTrue();
        ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).as("a quiet period with nothing drained").isFalse();
    }

    @Test
    void sendAndClose_inputAfterwards_discardedNotDecoded() {
        ErrorLinger.sendAndClose(ch, ErrorMessage.of(ErrorCode.BAD_FRAME, "bad"), 60_000);
        ByteBuf commit = Unpooled.buffer();
        FrameEncoder.write(new Commit(7), commit);
        assertThat(ch.writeInbound(commit)).as("nothing decoded while lingering").isFalse();
        assertThat(decoder.isFailed()).isTrue();
        assertThat(ch.config().isAutoRead()).isTrue();
    }

    @Test
    void sendAndClose_writeAfterTheError_droppedAndFailed() {
        ErrorLinger.sendAndClose(ch, ErrorMessage.of(ErrorCode.BAD_FRAME, "bad"), 60_000);
        ChannelFuture late = ch.writeAndFlush(new Commit(7));
        assertThat(late.cause()).isInstanceOf(ClosedChannelException.class);
        assertThat(written()).isInstanceOf(ErrorMessage.class);
        assertThat((Object) ch.readOutbound()).as("the ERROR is the last frame").isNull();
    }

    @Test
    void sendAndClose_calledTwice_oneErrorOnly() {
        ErrorLinger.sendAndClose(ch, ErrorMessage.of(ErrorCode.BAD_FRAME, "first"), 60_000);
        ErrorLinger.sendAndClose(ch, ErrorMessage.of(ErrorCode.BAD_STATE, "second"), 60_000);
        assertThat(written().message()).isEqualTo("first");
        assertThat((Object) ch.readOutbound()).isNull();
    }

    @Test
    void sendAndClose_peerCloses_closedAtOnce() {
        ErrorLinger.sendAndClose(ch, ErrorMessage.of(ErrorCode.BAD_FRAME, "bad"), 60_000);
        ch.close(); // what Netty does when the peer's FIN arrives (no half-closure)
        ch.advanceTimeBy(ErrorLinger.ERROR_LINGER_MILLIS, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        assertThat(written().code()).isEqualTo(ErrorCode.BAD_FRAME);
    }
}
