package org.holdfast.bench.runner;

import java.util.List;

/** Result objects for summary tests, as a run would fill them: two days of one volume, both restored. */
final class TargetResults {
    private TargetResults() {
    }

    /**
     * {@code name}'s run: day 0 and day 1 of 100 MB each in {@code seconds} (half that on the tool's clock),
     * {@code dupDay1} duplicates on day 1, {@code stored} bytes at the end, day 0 and day 1 restored in
     * {@code seconds} each.
     */
    static BenchResults.TargetResult target(String name, long dupDay1, double seconds, long stored) {
        BenchResults.TargetResult t = new BenchResults.TargetResult();
        t.name = name;
        t.snapshots.add(new BenchResults.SnapshotRow("v", 0, 100_000_000, 100_000_000, 0, seconds, seconds / 2, 1, 10,
                100, 0, stored / 2, "1"));
        t.snapshots.add(new BenchResults.SnapshotRow("v", 1, 100_000_000, 1_000_000, 0, seconds, seconds / 2, 1, 10,
                5, dupDay1, stored, "2"));
        t.restores.add(new BenchResults.RestoreRow("v", 0, 100_000_000, seconds, -1, 1, true, "a", "a"));
        t.restores.add(new BenchResults.RestoreRow("v", 1, 100_000_000, seconds, -1, 1, true, "a", "a"));
        return t;
    }

    /** Fills every target's summary, as the run does before the checks. */
    static List<BenchResults.TargetResult> summarised(BenchResults.TargetResult... targets) {
        List<BenchResults.TargetResult> all = List.of(targets);
        for (BenchResults.TargetResult t : all) {
            t.summary = TargetSummary.of(t, all);
        }
        return all;
    }
}
