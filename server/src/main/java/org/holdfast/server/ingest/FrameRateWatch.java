package org.holdfast.server.ingest;

/**
 * The minimum-rate watch of the frame being received: a frame is overdue once it has taken longer
 * than its size at the minimum rate plus the grace ({@link IngestLimits#frameDeadline}), counting
 * only the time the server was reading (not while it paused reading for its own reasons). A sender
 * that trickles a large frame therefore cannot hold its reservation of the in-flight budget for
 * long. Event loop only.
 */
final class FrameRateWatch {
    private final IngestLimits limits;
    private long lastTick;
    // the decoder's frame count when the watched frame began; -1: no frame partly received
    private long watchedFrame = -1;
    private long readingNanos;

    FrameRateWatch(IngestLimits limits, long nowNanos) {
        this.limits = limits;
        this.lastTick = nowNanos;
    }

    /** The tick of the watch: how often a connection asks {@link #overdue}, in milliseconds. */
    static long tickMillis(IngestLimits limits) {
        return Math.max(10, Math.min(1000, limits.frameGrace().toMillis() / 4));
    }

    /**
     * One tick at {@code nowNanos}: {@code partialBytes} of a frame received so far (0: none),
     * {@code framesDecoded} frames completed before it, {@code reading} whether the connection reads.
     * True if the partial frame is past its deadline.
     */
    boolean overdue(long nowNanos, int partialBytes, long framesDecoded, boolean reading) {
        long elapsed = nowNanos - lastTick;
        lastTick = nowNanos;
        if (partialBytes == 0) {
            watchedFrame = -1;
            return false;
        }
        if (framesDecoded != watchedFrame) {
            watchedFrame = framesDecoded;
            readingNanos = 0;
            return false;
        }
        if (reading) {
            readingNanos += elapsed;
        }
        return readingNanos > limits.frameDeadline(partialBytes).toNanos();
    }
}
