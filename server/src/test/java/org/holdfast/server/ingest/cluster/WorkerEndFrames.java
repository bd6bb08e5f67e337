package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;

/** Raw frames and the refusals of both ends of the worker link, shared by the bad-input tests of its services. */
final class WorkerEndFrames {
    private WorkerEndFrames() {
    }

    /** A frame header announcing {@code bodyBytes} of {@code type}; the caller writes the body (or lies about it). */
    static ByteBuf header(MessageType type, long bodyBytes) {
        return Unpooled.buffer().writeInt((int) (bodyBytes + ProtocolLimits.HEADER_BYTES)).writeByte(ProtocolLimits.VERSION)
                .writeByte(type.code());
    }

    /**
     * Feeds {@code bytes} to the worker end {@code ch}: returns the one ERROR it answers, after checking
     * that it keeps the link open for the linger (so the master reads why) and closes it then.
     */
    static ErrorMessage errorAndClose(EmbeddedChannel ch, ByteBuf bytes) {
        ch.writeInbound(bytes);
        ch.runPendingTasks();
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound((ByteBuf) ch.readOutbound());
        ErrorMessage e = decode.readInbound();
        assertThat(ch.isOpen()).as("the worker lingers after the ERROR").isTrue();
        ch.advanceTimeBy(ErrorLinger.ERROR_LINGER_MILLIS, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).as("the worker closes the link once the linger is over").isFalse();
        return e;
    }

    /** The master's decoder refuses {@code bytes} (an answer a worker sent) with {@code code} and {@code message}. */
    static void answerRefused(ByteBuf bytes, ErrorCode code, String message) {
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        assertThatThrownBy(() -> decode.writeInbound(bytes)).isInstanceOf(ProtocolException.class)
                .satisfies(e -> assertThat(((ProtocolException) e).code()).isEqualTo(code)).hasMessageContaining(message);
    }
}
