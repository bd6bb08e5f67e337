package org.holdfast.server.stats;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * Bytes backed up (received by the ingest port in BLOCKS frames) and restored (sent in restores),
 * per volume and in total: running totals since start, and a recent rate over the last
 * {@link #WINDOW_SECONDS} seconds, kept in one-second buckets. Recording is two atomic adds and a
 * map lookup per frame (not per block). Volumes are forgotten after a window without traffic.
 */
public final class TransferRates {
    /** Seconds the recent rate averages over. */
    public static final int WINDOW_SECONDS = 60;

    /** Which way the bytes went. */
    public enum Direction { INGEST, RESTORE }

    private final LongSupplier clockMillis;
    private final Meter[] totals = {new Meter(), new Meter()};
    private final Map<String, Meter[]> volumes = new ConcurrentHashMap<>();

    /** Rates on {@code clockMillis} (the server clock; tests step it). */
    public TransferRates(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
    }

    /** Records {@code bytes} moved for {@code volume}. */
    public void record(Direction d, String volume, long bytes) {
        long second = clockMillis.getAsLong() / 1000;
        totals[d.ordinal()].add(second, bytes);
        volumes.computeIfAbsent(volume, v -> new Meter[] {new Meter(), new Meter()})[d.ordinal()].add(second, bytes);
    }

    /** Bytes moved since start. */
    public long total(Direction d) {
        return totals[d.ordinal()].total.get();
    }

    /** Bytes per second over the last window, all volumes. */
    public double rate(Direction d) {
        return totals[d.ordinal()].rate(clockMillis.getAsLong() / 1000);
    }

    /** Bytes per second over the last window, per volume with traffic in it (name order); forgets idle volumes. */
    public Map<String, Double> rates(Direction d) {
        long second = clockMillis.getAsLong() / 1000;
        Map<String, Double> out = new TreeMap<>();
        volumes.entrySet().removeIf(e -> e.getValue()[0].idle(second) && e.getValue()[1].idle(second));
        volumes.forEach((v, m) -> {
            double r = m[d.ordinal()].rate(second);
            if (r > 0) {
                out.put(v, r);
            }
        });
        return out;
    }

    /** One direction's bytes: a running total and a ring of per-second sums, each bucket tagged with its second. */
    private static final class Meter {
        final AtomicLong total = new AtomicLong();
        final AtomicLongArray bytes = new AtomicLongArray(WINDOW_SECONDS);
        final AtomicLongArray seconds = new AtomicLongArray(WINDOW_SECONDS);
        volatile long lastSecond;

        void add(long second, long n) {
            total.addAndGet(n);
            int i = (int) Math.floorMod(second, WINDOW_SECONDS);
            long tag = seconds.get(i);
            if (tag != second && seconds.compareAndSet(i, tag, second)) {
                bytes.set(i, 0); // a bucket of an older lap: reuse it (a concurrent add may be lost; a rate is an estimate)
            }
            bytes.addAndGet(i, n);
            lastSecond = second;
        }

        double rate(long now) {
            long sum = 0;
            for (int i = 0; i < WINDOW_SECONDS; i++) {
                long tag = seconds.get(i);
                if (tag > now - WINDOW_SECONDS && tag <= now) {
                    sum += bytes.get(i);
                }
            }
            return sum / (double) WINDOW_SECONDS;
        }

        boolean idle(long now) {
            return lastSecond <= now - WINDOW_SECONDS;
        }
    }
}
