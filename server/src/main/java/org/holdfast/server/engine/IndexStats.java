package org.holdfast.server.engine;

/** Cumulative counters of a {@link FingerprintIndex}; the engine-specific ones are 0 where they do not apply. */
public record IndexStats(
        long lookups,
        long hits,
        long recorded,
        long forgotten,
        long sfiHits,
        long containersLoaded,
        long memoryBytes) {
}
