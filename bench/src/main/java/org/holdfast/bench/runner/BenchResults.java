package org.holdfast.bench.runner;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Everything one bench run measured, in the shape written to the JSON file. */
public final class BenchResults {
    /** Machine, command line and time of the run. */
    public final Map<String, Object> run = new LinkedHashMap<>();
    /** One entry per workload. */
    public final List<WorkloadResult> workloads = new ArrayList<>();

    /** One backup of one volume state by one target. */
    public record SnapshotRow(String volume, int day, long logicalBytes, long changedBytes, long zeroBytes,
                              double seconds, double toolSeconds, long clientPeakRssBytes, long sentBytes, long newBlocks,
                              long duplicateBlocks, long storedBytesAfter, String snapshotId) {
    }

    /**
     * One restore, checked against the SHA-256 of the image state it came from, with the data-log
     * regions the server read for it (-1 for peers).
     */
    public record RestoreRow(String volume, int day, long bytes, double seconds, double toolSeconds, long clientPeakRssBytes,
                             boolean identical, String expectedSha256, String restoredSha256, long regionsRead) {
        public RestoreRow(String volume, int day, long bytes, double seconds, double toolSeconds, long clientPeakRssBytes,
                          boolean identical, String expectedSha256, String restoredSha256) {
            this(volume, day, bytes, seconds, toolSeconds, clientPeakRssBytes, identical, expectedSha256, restoredSha256, -1);
        }
    }

    /** One target's results on one workload. */
    public static final class TargetResult {
        public String name;
        public Map<String, Object> describe = new LinkedHashMap<>();
        public String error;
        public final List<SnapshotRow> snapshots = new ArrayList<>();
        public final List<RestoreRow> restores = new ArrayList<>();
        public Map<String, Object> server = new LinkedHashMap<>();
        public Map<String, Object> summary = new LinkedHashMap<>();
    }

    /** One workload's generation figures and its targets. */
    public static final class WorkloadResult {
        public String name;
        public Map<String, Object> describe = new LinkedHashMap<>();
        public double generationSeconds;
        /** Seconds of flushing the generated images to disk after each day's generation, outside every timing. */
        public double flushSeconds;
        /** Per day, the order in which the targets backed up (rotated each day, offset per workload). */
        public final List<List<String>> targetOrder = new ArrayList<>();
        public final List<TargetResult> targets = new ArrayList<>();
        public Map<String, Object> comparison = new LinkedHashMap<>();
    }

    /** Every restore of every target was byte-identical, and no target failed. */
    public boolean allRestoresIdentical() {
        for (WorkloadResult w : workloads) {
            for (TargetResult t : w.targets) {
                if (t.error != null) {
                    return false;
                }
                for (RestoreRow r : t.restores) {
                    if (!r.identical()) {
                        return false;
                    }
                }
            }
        }
        return true;
    }
}
