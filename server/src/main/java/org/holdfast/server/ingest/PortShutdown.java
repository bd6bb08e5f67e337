package org.holdfast.server.ingest;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import java.util.concurrent.TimeUnit;

/**
 * The steps every listening port of the server (agent port, cluster port) takes when it closes:
 * stop accepting and close every connection first, then (after the port's own workers finished)
 * stop its event loops.
 */
public final class PortShutdown {
    private PortShutdown() {
    }

    /** Closes the listening channel (may be null: never bound) and, waiting up to 10 s, every connection. */
    public static void closeChannels(Channel listening, ChannelGroup connections) {
        if (listening != null) {
            listening.close().syncUninterruptibly();
        }
        connections.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    /** Stops each group (null ones skipped) without a quiet period, waiting up to 5 s each. */
    public static void stopLoops(EventLoopGroup... groups) {
        for (EventLoopGroup g : groups) {
            if (g != null) {
                g.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
            }
        }
    }
}
