package org.holdfast.server.ingest;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A log line that is written at most once per interval, with the count of the ones left out since,
 * so that a flood of refused connections cannot flood the server log (agent port and cluster port).
 * Thread-safe.
 */
public final class RateLimitedLog {
    private final System.Logger log;
    private final long intervalNanos;
    private final AtomicLong nextNanos = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    public RateLimitedLog(System.Logger log, java.time.Duration interval) {
        this.log = log;
        this.intervalNanos = interval.toNanos();
    }

    /** Logs {@code message} at INFO unless a line was logged less than an interval ago. */
    public void info(String message) {
        log(Level.INFO, message);
    }

    /** Logs {@code message} at WARNING unless a line was logged less than an interval ago. */
    public void warning(String message) {
        log(Level.WARNING, message);
    }

    private void log(Level level, String message) {
        long now = System.nanoTime();
        long next = nextNanos.get();
        if ((next != Long.MIN_VALUE && now - next < 0) || !nextNanos.compareAndSet(next, now + intervalNanos)) {
            suppressed.incrementAndGet();
            return;
        }
        long left = suppressed.getAndSet(0);
        log.log(level, left == 0 ? message : message + " (" + left + " similar lines left out since the last one)");
    }

    /** Lines left out since the last one written. */
    long suppressed() {
        return suppressed.get();
    }
}
