package org.holdfast.server.engine;

/**
 * Cumulative counters of a {@link FingerprintIndex}; the engine-specific ones are 0 where they do not apply.
 * {@code busyNanos} is the time spent inside {@link DedupStream#lookup} and {@link DedupStream#record},
 * summed over the sessions that call them, so {@code lookups / busyNanos} is the engine's own rate.
 */
public record IndexStats(
        long lookups,
        long hits,
        long recorded,
        long forgotten,
        long sfiHits,
        long containersLoaded,
        long memoryBytes,
        long busyNanos) {
}
