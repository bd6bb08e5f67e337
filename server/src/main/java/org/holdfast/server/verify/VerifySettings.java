package org.holdfast.server.verify;

import java.time.Duration;

/**
 * Settings of verification: reader threads, a read rate limit in bytes per second (0: none), the
 * incremental window (a block found sound more recently is not read again; zero: read all) and
 * the schedule interval (null: no scheduled runs).
 */
public record VerifySettings(int threads, long bytesPerSecond, Duration window, Duration schedule) {
    public VerifySettings {
        if (threads < 1 || threads > 64) {
            throw new IllegalArgumentException("verify threads must be 1..64, got " + threads);
        }
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException("verify rate must not be negative, got " + bytesPerSecond);
        }
        if (window == null || window.isNegative()) {
            throw new IllegalArgumentException("verify window must be zero or positive");
        }
        if (schedule != null && (schedule.isZero() || schedule.isNegative())) {
            throw new IllegalArgumentException("verify schedule must be positive (or off)");
        }
    }

    /** Two threads, 100 MB/s, a 30-day window, weekly. */
    public static VerifySettings defaults() {
        return new VerifySettings(2, 100_000_000L, Duration.ofDays(30), Duration.ofDays(7));
    }
}
