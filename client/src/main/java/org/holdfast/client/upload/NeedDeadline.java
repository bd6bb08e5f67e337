package org.holdfast.client.upload;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * When the agent stops waiting for the server's NEED: the silence is counted only while a sent run
 * awaits its answer, so minutes spent reading unchanged data before the next changed block never
 * count against the server.
 */
final class NeedDeadline {
    private final long timeoutNanos;
    private final LongSupplier nanoTime;
    private long quietSince;

    NeedDeadline(Duration timeout, LongSupplier nanoTime) {
        this.timeoutNanos = timeout.toNanos();
        this.nanoTime = nanoTime;
        this.quietSince = nanoTime.getAsLong();
    }

    /** The server said something: the silence starts over. */
    void heard() {
        quietSince = nanoTime.getAsLong();
    }

    /**
     * A poll returned nothing. True once runs have been awaited, with no message from the server,
     * for longer than the timeout; while nothing is awaited the clock stays at zero.
     */
    boolean expired(boolean awaiting) {
        if (!awaiting) {
            heard();
            return false;
        }
        return nanoTime.getAsLong() - quietSince > timeoutNanos;
    }
}
