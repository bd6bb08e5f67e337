package org.holdfast.client.net;

import io.netty.channel.ChannelConfig;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Backpressure for the frames waiting in a connection's inbox: reading pauses when
 * {@link #HIGH_WATER} wait and resumes once the consumer has taken them down to {@link #LOW_WATER}.
 *
 * <p>The event loop counts arrivals and pauses; the consumer thread counts takings and resumes.
 * Each side looks at the other's state again after changing its own, so a consumer that empties
 * the inbox between the event loop's count and its pause (a preempted event loop on a loaded
 * machine) cannot leave reading paused with nothing left to take: the agent then waited forever
 * for NEEDs that sat unread in its socket.
 */
final class ReadPause {
    /** Frames waiting before the channel stops reading. */
    static final int HIGH_WATER = 16;
    /** Frames waiting at which reading resumes. */
    static final int LOW_WATER = 4;

    private final ChannelConfig config;
    private final AtomicInteger waiting = new AtomicInteger();

    ReadPause(ChannelConfig config) {
        this.config = config;
    }

    /** A frame went into the inbox. Event loop only. */
    void arrived() {
        if (waiting.incrementAndGet() >= HIGH_WATER) {
            config.setAutoRead(false);
            // the consumer may have taken everything since the count, while reading still looked on
            if (waiting.get() <= LOW_WATER) {
                config.setAutoRead(true);
            }
        }
    }

    /** The consumer took a frame out of the inbox. Consumer thread only. */
    void taken() {
        if (waiting.decrementAndGet() <= LOW_WATER && !config.isAutoRead()) {
            config.setAutoRead(true);
        }
    }

    /** Frames in the inbox now (as counted). */
    int waiting() {
        return waiting.get();
    }
}
