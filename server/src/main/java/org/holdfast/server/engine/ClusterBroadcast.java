package org.holdfast.server.engine;

import java.util.Locale;

/**
 * How the master of {@link ClusterFingerprintIndex} sends a lookup to its workers in
 * {@link ClusterMode#NEAREST} mode (hash mode sends each worker its share and never broadcasts).
 */
public enum ClusterBroadcast {
    /** Every lookup whole to every worker (thesis 7.2.1): the master's link carries N copies of each fingerprint. */
    FULL,
    /**
     * First the lookup's sampled fingerprints to every worker ({@link SegmentProbe}), then the whole
     * lookup only to the workers with a candidate container, and to those that resolved part of the
     * stream's latest lookups; the others answer all-miss without scanning.
     */
    TWO_PHASE;

    /** What {@code holdfast.dedup.cluster.broadcast} defaults to (docs/benchmarks.md has the figures that chose it). */
    public static final ClusterBroadcast DEFAULT = TWO_PHASE;

    /** Parses {@code two-phase} or {@code full}; anything else is an error naming the setting. */
    public static ClusterBroadcast parse(String name, String setting) {
        return switch (name == null ? "" : name.toLowerCase(Locale.ROOT)) {
            case "two-phase" -> TWO_PHASE;
            case "full" -> FULL;
            default -> throw new IllegalArgumentException(setting + " must be 'two-phase' or 'full', not '" + name + "'");
        };
    }
}
