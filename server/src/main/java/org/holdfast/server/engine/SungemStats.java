package org.holdfast.server.engine;

/**
 * A snapshot of the Sungem engine's own figures (beyond {@link IndexStats}) for metrics and benchmarks;
 * {@code forgetsNotHeld}: freed PBNs of another worker's range skipped by {@code forgetIfHeld}.
 */
public record SungemStats(
        int sfiEntries,
        int sfiCapacity,
        int sfiRecords,
        long sfiDownsamples,
        long sfiEvictions,
        long sfiStabilized,
        long containersTouched,
        long containersUseful,
        long containersLoaded,
        long containersAbsent,
        long containerWrites,
        long containerEvictions,
        int containersCached,
        int containersCreated,
        long readOnlyFallbacks,
        long exactSegmentMatches,
        long segmentMerges,
        long subSegments,
        long newSegments,
        long fallbackProbes,
        long fallbackHits,
        int staleMarks,
        long stalePbnsDropped,
        double bloomFill,
        double bloomFalsePositiveRate,
        int bloomFilters,
        long sfiBytes,
        long bloomBytes,
        long containerCacheBytes,
        long containerBufferBytes,
        long staleMarkBytes,
        long forgetsNotHeld) {

    /** Share of the containers searched that produced at least one match. */
    public double usefulContainerShare() {
        return containersTouched == 0 ? 0 : (double) containersUseful / containersTouched;
    }
}
