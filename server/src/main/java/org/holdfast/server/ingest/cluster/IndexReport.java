package org.holdfast.server.ingest.cluster;

/**
 * What a worker last told the master about its dedup index: the fingerprints it holds
 * ({@code entries}, the {@code storedEntries} every dedup answer carries) and when that answer
 * arrived ({@code atMillis}, epoch milliseconds on the master's clock).
 */
public record IndexReport(long entries, long atMillis) {
}
