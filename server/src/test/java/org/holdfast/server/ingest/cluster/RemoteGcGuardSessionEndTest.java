package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcProtect;
import org.holdfast.common.protocol.GcSessionEnd;
import org.junit.jupiter.api.Test;

/** {@link RemoteGcGuard#sessionEnd} after a GC_PROTECT timed out on a link that stays open. */
class RemoteGcGuardSessionEndTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));

    @Test
    void sessionEnd_afterProtectTimedOut_stillSentWhileTheChannelIsOpen() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            RemoteGcGuard guard = new RemoteGcGuard("w1", RANGE, ch, Duration.ofMillis(50));
            CompletableFuture<int[]> f = guard.protect(7, new long[] {RANGE.first()}, 0, 1, true);
            await().atMost(Duration.ofSeconds(5)).until(f::isDone);
            assertThat(f).isCompletedExceptionally();
            assertThat(guard.isUp()).as("a timed-out call ends this end's use").isFalse();
            assertThat((Object) ch.readOutbound()).isInstanceOf(GcProtect.class);

            guard.sessionEnd(7);

            Object sent = ch.readOutbound();
            assertThat(sent).as("the worker still holds session 7 on this open link: it must hear that it ended")
                    .isInstanceOf(GcSessionEnd.class);
            assertThat(((GcSessionEnd) sent).sessionId()).isEqualTo(7);
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void sessionEnd_channelClosed_nothingSent() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcGuard guard = new RemoteGcGuard("w1", RANGE, ch, Duration.ofSeconds(5));
        ch.close();
        guard.sessionEnd(7);
        assertThat((Object) ch.readOutbound()).isNull();
        ch.finishAndReleaseAll();
    }
}
