package org.holdfast.server.engine;

/**
 * What a {@link DedupWorker} reports about itself: fingerprints stored in its containers (the load
 * the master balances new data by), containers it has, fingerprints looked up, input fingerprints that
 * were SFI samples, containers loaded from disk, time spent in lookup and record, and memory of its
 * engine.
 */
public record DedupLoad(int worker, long storedEntries, int containers, long lookups, long sfiHits,
        long containersLoaded, long busyNanos, long memoryBytes) {
}
