package org.holdfast.server.ingest;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The input of one agent connection that waits for its serial lane: frames and bytes queued (the
 * connection stops reading while either is at its bound) and NEEDs written but not flushed yet.
 * Counting is thread-safe; the NEEDs are the lane's alone.
 */
final class LaneBacklog {
    /** NEEDs written before the lane flushes even though more frames are waiting. */
    static final int FLUSH_NEEDS = 64;

    private final int maxFrames;
    private final long maxBytes;
    private final AtomicInteger frames = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    // lane
    private int unflushedNeeds;

    LaneBacklog(int maxFrames, long maxBytes) {
        this.maxFrames = maxFrames;
        this.maxBytes = maxBytes;
    }

    /** A frame of {@code frameBytes} was queued for the lane. */
    void queued(long frameBytes) {
        frames.incrementAndGet();
        bytes.addAndGet(frameBytes);
    }

    /** The lane is done with a frame of {@code frameBytes}. */
    void done(long frameBytes) {
        frames.decrementAndGet();
        bytes.addAndGet(-frameBytes);
    }

    /** True while fewer frames and bytes than the bounds wait: the connection may read more. */
    boolean hasRoom() {
        return frames.get() < maxFrames && bytes.get() < maxBytes;
    }

    /** The lane wrote a NEED without flushing it. Lane only. */
    void needWritten() {
        unflushedNeeds++;
    }

    /**
     * True (and the count starts again) if the NEEDs written should be flushed now: once no more
     * frames wait for the lane (the one being handled aside), or every {@link #FLUSH_NEEDS}. A run of
     * scattered one-block changes then costs one system call per batch, not per NEED. Lane only.
     */
    boolean flushNeedsNow() {
        if (unflushedNeeds > 0 && (frames.get() <= 1 || unflushedNeeds >= FLUSH_NEEDS)) {
            unflushedNeeds = 0;
            return true;
        }
        return false;
    }
}
