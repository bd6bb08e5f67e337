package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.ProtocolException;
import org.junit.jupiter.api.Test;

/**
 * What every worker link service shares: a bad frame is answered ERROR and goes no further down the
 * pipeline, any other failure does, and the service's lane is stopped before the link's end passes on.
 */
class WorkerLinkServiceTest {
    private final List<String> events = new ArrayList<>();

    private final class Service extends WorkerLinkService {
        Service() {
            super("test");
        }

        @Override
        void linkEnded() {
            events.add("lane stopped");
        }
    }

    /** The handler after the service: what it passed on. */
    private final class Next extends ChannelInboundHandlerAdapter {
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            events.add("failure " + cause.getMessage());
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            events.add("inactive");
        }
    }

    @Test
    void exceptionCaught_badFrame_isAnsweredErrorAndNotPassedOn() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameEncoder(), new Service(), new Next());
        ch.pipeline().fireExceptionCaught(new ProtocolException(ErrorCode.BAD_FRAME, "count 0"));
        ch.runPendingTasks();
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound((ByteBuf) ch.readOutbound());
        assertThat(((ErrorMessage) decode.readInbound()).code()).isEqualTo(ErrorCode.BAD_FRAME);
        assertThat(ErrorLinger.isLingering(ch)).isTrue();
        assertThat(events).isEmpty();
    }

    @Test
    void exceptionCaught_otherFailure_isPassedOnAndNothingWritten() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameEncoder(), new Service(), new Next());
        ch.pipeline().fireExceptionCaught(new IllegalStateException("disk gone"));
        ch.runPendingTasks();
        assertThat(events).containsExactly("failure disk gone");
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void channelInactive_stopsTheLaneOnceAndThenPassesTheEndOn() {
        EmbeddedChannel ch = new EmbeddedChannel(new Service(), new Next());
        ch.close();
        ch.runPendingTasks();
        assertThat(events).containsExactly("lane stopped", "inactive");
    }
}
