package org.holdfast.server.jobs;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the test moves by hand. */
final class ManualClock extends Clock {
    private final AtomicLong millis;

    ManualClock(long start) {
        this.millis = new AtomicLong(start);
    }

    void advance(long ms) {
        millis.addAndGet(ms);
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
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }
}
