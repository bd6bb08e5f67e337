package org.holdfast.server.stats;

import java.util.ArrayList;
import java.util.List;

/**
 * The recent history of the figures the console charts, sampled in memory every few seconds (the
 * daily series in the catalog is too coarse to watch a backup or a GC run): the newest
 * {@link #capacity()} samples, oldest dropped first, lost on restart. The ingest rate of a sample is
 * exact over the time since the one before (bytes ingested are a running total).
 */
public final class StatsHistory {
    private final Sample[] ring;
    private int next;
    private int size;

    /** A history of at most {@code capacity} samples. */
    public StatsHistory(int capacity) {
        if (capacity < 2) {
            throw new IllegalArgumentException("a history needs room for at least 2 samples, got " + capacity);
        }
        this.ring = new Sample[capacity];
    }

    /**
     * The figures at {@code atMillis}: stored payload of the live blocks (as of the latest survey),
     * the data logs' size on disk, logical bytes of every retained snapshot, block payload bytes
     * received since start, and bytes per second received since the previous sample.
     */
    public record Sample(long atMillis, long storedBytes, long dataLogBytes, long logicalBytes, long bytesIngested,
                         double ingestBytesPerSecond) {
    }

    public int capacity() {
        return ring.length;
    }

    /** Adds a sample taken from {@code stats}, its rate computed against the newest one before it. */
    public synchronized Sample add(Statistics.Figures stats) {
        Sample last = size == 0 ? null : ring[Math.floorMod(next - 1, ring.length)];
        double rate;
        if (last == null || stats.atMillis() <= last.atMillis() || stats.bytesIngested() < last.bytesIngested()) {
            rate = stats.ingestBytesPerSecond(); // the first one, or the clock or the counter went back: the recent rate
        } else {
            rate = (stats.bytesIngested() - last.bytesIngested()) * 1000.0 / (stats.atMillis() - last.atMillis());
        }
        Sample s = new Sample(stats.atMillis(), stats.storedBytes(), stats.dataLogBytes(), stats.logicalBytes(),
                stats.bytesIngested(), rate);
        ring[next] = s;
        next = (next + 1) % ring.length;
        size = Math.min(size + 1, ring.length);
        return s;
    }

    /** The samples at or after {@code sinceMillis}, oldest first. */
    public synchronized List<Sample> since(long sinceMillis) {
        List<Sample> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            Sample s = ring[Math.floorMod(next - size + i, ring.length)];
            if (s.atMillis() >= sinceMillis) {
                out.add(s);
            }
        }
        return out;
    }
}
