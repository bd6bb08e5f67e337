package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.junit.jupiter.api.Test;

/** A timer's close goes behind the connection's ERROR, never ahead of it (the agent would get a close without a reason). */
class ConnectionEndTest {

    @Test
    void closeBehindError_noErrorHandedOverYet_leavesTheConnectionOpen() {
        EmbeddedChannel channel = new EmbeddedChannel();
        ConnectionEnd end = new ConnectionEnd(60_000);
        assertThat(end.closeBehindError(channel)).as("no ERROR handed over: nothing to close behind").isFalse();
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isTrue();
        channel.finishAndReleaseAll();
    }

    @Test
    void closeBehindError_afterTheError_closesAfterItWasWritten() {
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.config().setAutoClose(false);
        ConnectionEnd end = new ConnectionEnd(60_000);
        end.closeWithError(channel, ErrorCode.LIMIT_EXCEEDED, "too slow");
        assertThat(end.closing()).isTrue();
        assertThat(end.closeBehindError(channel)).isTrue();
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
        Object written = channel.readOutbound();
        assertThat(written).as("the ERROR went out before the close").isInstanceOf(ErrorMessage.class);
        assertThat(((ErrorMessage) written).message()).isEqualTo("too slow");
    }
}
