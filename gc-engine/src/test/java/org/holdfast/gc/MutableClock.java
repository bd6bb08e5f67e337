package org.holdfast.gc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A simulated clock for tests. */
public final class MutableClock extends Clock {
    private volatile long millis;

    public MutableClock(long millis) {
        this.millis = millis;
    }

    public void advance(Duration d) {
        millis += d.toMillis();
    }

    public void set(long m) {
        millis = m;
    }

    @Override
    public long millis() {
        return millis;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis);
    }
}
