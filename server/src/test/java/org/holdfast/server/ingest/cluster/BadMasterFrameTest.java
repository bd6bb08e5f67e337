package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.ProtocolException;
import org.junit.jupiter.api.Test;

/** The one way both worker services refuse a bad frame from the master, on a real pipeline (encoder, linger timers). */
class BadMasterFrameTest {
    /** Hands every failure to {@link BadMasterFrame} as the services do, keeping those it passes on. */
    private static final class Service extends ChannelInboundHandlerAdapter {
        final List<Throwable> passedOn = new ArrayList<>();

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!BadMasterFrame.refuse(ctx, cause, "data")) {
                passedOn.add(cause);
            }
        }
    }

    @Test
    void refuse_badFrame_answersErrorWithItsCode_lingers_thenCloses() {
        Service s = new Service();
        EmbeddedChannel ch = new EmbeddedChannel(new FrameEncoder(), s);
        ch.pipeline().fireExceptionCaught(new ProtocolException(ErrorCode.BAD_FRAME, "count 0"));
        ch.runPendingTasks();
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound((ByteBuf) ch.readOutbound());
        ErrorMessage e = decode.readInbound();
        assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
        assertThat(e.message()).contains("count 0");
        assertThat(s.passedOn).isEmpty();
        assertThat(ErrorLinger.isLingering(ch)).isTrue();
        assertThat(ch.isOpen()).as("lingers after the ERROR").isTrue();
        ch.advanceTimeBy(ErrorLinger.ERROR_LINGER_MILLIS, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).as("closed once the linger is over").isFalse();
    }

    @Test
    void refuse_otherFailure_isPassedOn_nothingWritten_linkStaysOpen() {
        Service s = new Service();
        EmbeddedChannel ch = new EmbeddedChannel(new FrameEncoder(), s);
        IllegalStateException other = new IllegalStateException("not a frame problem");
        ch.pipeline().fireExceptionCaught(other);
        ch.runPendingTasks();
        assertThat(s.passedOn).containsExactly(other);
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(ErrorLinger.isLingering(ch)).isFalse();
        assertThat(ch.isOpen()).isTrue();
    }
}
