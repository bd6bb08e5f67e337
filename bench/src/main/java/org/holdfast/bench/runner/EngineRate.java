package org.holdfast.bench.runner;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The dedup engine's fingerprints per second, from the server's counters read before and after a
 * target's backups. Two rates over the same fingerprint count: over the engine's own busy time
 * ({@code holdfast_dedup_engine_seconds_total}: time inside the engine's lookup and record, summed
 * over ingest threads), and end to end, over the agents' backup seconds (reading, hashing, the wire
 * and storing included, so a lower bound on the engine).
 */
public final class EngineRate {
    static final String TIMER = "holdfast_dedup_engine_seconds_total";
    static final String NO_TIMER = "n/a: the server exposes no engine timer (" + TIMER + ")";
    static final String NO_COUNTER = "n/a: the server exposes no fingerprint counter";
    static final String NO_WORK = "n/a: the engine looked up no fingerprints during the backups";

    private EngineRate() {
    }

    /**
     * The figures for the JSON's server section: {@code engineFingerprintsPerSecond} and
     * {@code endToEndFingerprintsPerSecond} (a number, or an "n/a: reason" text), the deltas and the
     * metric names they came from.
     */
    public static Map<String, Object> of(Map<String, Double> before, Map<String, Double> after, double backupSeconds) {
        Map<String, Object> f = new LinkedHashMap<>();
        String fp = PrometheusText.find(after, "dedup_fingerprints");
        if (fp == null) {
            fp = PrometheusText.find(after, "index_lookups"); // servers from before the exact engine had dedup meters
        }
        if (fp == null) {
            f.put("engineFingerprintsPerSecond", NO_COUNTER);
            f.put("endToEndFingerprintsPerSecond", NO_COUNTER);
            return f;
        }
        double fingerprints = delta(before, after, fp);
        f.put("engineFingerprints", fingerprints);
        f.put("engineFingerprintsMetric", fp);
        if (!after.containsKey(TIMER)) {
            f.put("engineFingerprintsPerSecond", NO_TIMER);
        } else {
            double seconds = delta(before, after, TIMER);
            f.put("engineSeconds", seconds);
            f.put("engineSecondsMetric", TIMER);
            f.put("engineFingerprintsPerSecond", fingerprints <= 0 ? NO_WORK
                    : seconds > 0 ? fingerprints / seconds : "n/a: " + TIMER + " did not advance");
        }
        f.put("endToEndFingerprintsPerSecond", fingerprints <= 0 ? NO_WORK
                : backupSeconds > 0 ? fingerprints / backupSeconds : "n/a: the agents reported no backup seconds");
        return f;
    }

    private static double delta(Map<String, Double> before, Map<String, Double> after, String name) {
        return after.get(name) - before.getOrDefault(name, 0.0);
    }
}
