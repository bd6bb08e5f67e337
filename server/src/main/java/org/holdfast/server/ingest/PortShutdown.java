package org.holdfast.server.ingest;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import java.util.concurrent.ExecutorService;
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

    /**
     * Lets {@code workers} take no more work and waits up to {@code seconds} for what they run;
     * runs {@code late} if that was not enough (not if this thread was interrupted: the interrupt is kept).
     */
    public static void stopWorkers(ExecutorService workers, long seconds, Runnable late) {
        workers.shutdown();
        try {
            if (!workers.awaitTermination(seconds, TimeUnit.SECONDS)) {
                late.run();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
