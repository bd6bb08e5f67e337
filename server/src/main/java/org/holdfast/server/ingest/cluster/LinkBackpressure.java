package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.HashSet;
import java.util.Set;
import org.holdfast.common.protocol.ErrorLinger;

/**
 * Who holds the worker link's reads paused (backpressure): a service whose lane is full, or the
 * link itself while its outbound buffer is over the high water mark (the master is not taking the
 * answers). The link reads (auto-read) only while nobody holds it. A paused link is the worker not
 * listening, not the master being silent: {@link #explainsSilence} tells the idle check so. Event
 * loop only, but for {@link #explainsSilence}'s read.
 */
final class LinkBackpressure {
    private static final AttributeKey<LinkBackpressure> KEY = AttributeKey.valueOf("holdfast.link-backpressure");
    /** The link's own hold while it is not writable. */
    static final Object UNWRITABLE = new Object();

    private final Channel channel;
    private final Set<Object> holders = new HashSet<>();
    private volatile boolean paused;
    private volatile long releasedAtNanos = System.nanoTime();

    private LinkBackpressure(Channel channel) {
        this.channel = channel;
    }

    /** The channel's backpressure, made on first use. */
    static LinkBackpressure of(Channel channel) {
        LinkBackpressure b = channel.attr(KEY).get();
        if (b == null) {
            b = new LinkBackpressure(channel);
            LinkBackpressure was = channel.attr(KEY).setIfAbsent(b);
            return was != null ? was : b;
        }
        return b;
    }

    /** {@code holder} wants no more requests read for now. */
    void hold(Object holder) {
        if (ErrorLinger.isLingering(channel)) {
            return; // a link that sent its ERROR reads on to discard the rest, until the linger ends it
        }
        if (holders.add(holder) && !paused) {
            paused = true;
            channel.config().setAutoRead(false);
        }
    }

    /** {@code holder} takes requests again; reading resumes once nobody holds it. */
    void release(Object holder) {
        if (holders.remove(holder) && holders.isEmpty() && paused) {
            paused = false;
            releasedAtNanos = System.nanoTime();
            channel.config().setAutoRead(true); // reads at once what waited in the socket
        }
    }

    /** Reads are paused. */
    boolean paused() {
        return paused;
    }

    /**
     * True if the link read nothing within the last {@code idleNanos} because it was paused (now, or
     * until less than that ago): what waits in the socket may well be the master's heartbeat answers.
     */
    boolean explainsSilence(long idleNanos) {
        return paused || System.nanoTime() - releasedAtNanos < idleNanos;
    }
}
