package org.holdfast.client.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.ChannelConfig;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ReadPauseTest {
    private final EmbeddedChannel channel = new EmbeddedChannel();

    @Test
    void pausesAtTheHighWaterMarkAndResumesAtTheLowOne() {
        DefaultChannelConfig config = new DefaultChannelConfig(channel);
        ReadPause pause = new ReadPause(config);
        for (int i = 1; i < ReadPause.HIGH_WATER; i++) {
            pause.arrived();
        }
        assertTrue(config.isAutoRead());
        pause.arrived();
        assertFalse(config.isAutoRead(), "reading pauses with " + ReadPause.HIGH_WATER + " frames waiting");
        while (pause.waiting() > ReadPause.LOW_WATER + 1) {
            pause.taken();
        }
        assertFalse(config.isAutoRead());
        pause.taken();
        assertTrue(config.isAutoRead(), "reading resumes at " + ReadPause.LOW_WATER + " frames waiting");
    }

    /**
     * The stalled bench backup ("the server sent no NEED for 3 minutes", every server thread idle):
     * the event loop counted the 16th frame, was preempted, the consumer took all 16 while reading
     * still looked on, then the event loop paused reading. Nothing was left to take, so nothing
     * ever resumed it, and the NEEDs sat unread in the agent's socket.
     */
    @Test
    void aConsumerThatEmptiesTheInboxBeforeThePauseTakesEffectDoesNotLeaveReadingPaused() {
        AtomicReference<ReadPause> pause = new AtomicReference<>();
        AtomicBoolean preempted = new AtomicBoolean(true);
        DefaultChannelConfig config = new DefaultChannelConfig(channel) {
            @Override
            public ChannelConfig setAutoRead(boolean autoRead) {
                if (!autoRead && preempted.getAndSet(false)) {
                    // the consumer runs between the event loop's count and its pause
                    for (int i = 0; i < ReadPause.HIGH_WATER; i++) {
                        pause.get().taken();
                    }
                }
                return super.setAutoRead(autoRead);
            }
        };
        pause.set(new ReadPause(config));
        for (int i = 0; i < ReadPause.HIGH_WATER; i++) {
            pause.get().arrived();
        }
        assertFalse(preempted.get(), "the pause was reached");
        assertEquals(0, pause.get().waiting());
        assertTrue(config.isAutoRead(), "the inbox is empty: reading must be on, no later frame can turn it back on");
    }
}
