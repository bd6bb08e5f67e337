package org.holdfast.server.ingest.cluster;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** The system clock, moved ahead by hand: a worker's grace passes without waiting for it. */
final class ForwardClock extends Clock {
    private final AtomicLong offset = new AtomicLong();

    /** Moves the clock {@code d} ahead. */
    void advance(Duration d) {
        offset.addAndGet(d.toMillis());
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
        return System.currentTimeMillis() + offset.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }
}
