package org.holdfast.bench.runner;

import static org.holdfast.bench.runner.ReportTable.num;

import java.io.PrintStream;
import java.util.Map;

/** Prints {@link RestoreAge} of every target: the newest snapshot's restore against the first's. */
final class RestoreAgeTable {
    private static final String FACTOR = "%.2f MB/region";

    private RestoreAgeTable() {
    }

    /** One row per target (Holdfast and peers) that restored both the first and the newest snapshot. */
    static void print(BenchResults.WorkloadResult w, PrintStream out) {
        boolean header = false;
        for (BenchResults.TargetResult t : w.targets) {
            if (!(t.summary.get("restoreNewestVsFirst") instanceof Map<?, ?> a) || !a.containsKey("newestDay")) {
                continue;
            }
            if (!header) {
                out.println("Restore of the newest snapshot against the first (all volumes of the day; speed factor in MB"
                        + " restored per data-log region read):");
                out.println("| target | first: day | MB/s | speed factor | newest: day | MB/s | speed factor | newest / first MB/s |");
                out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
                header = true;
            }
            out.println(row(t.name, a));
        }
    }

    static String row(String target, Map<?, ?> a) {
        // a peer's speed factor is n/a with a long reason in the JSON, said once in the header
        return String.format("| %s | %s | %s | %s | %s | %s | %s | %s |", target, a.get("firstDay"), num(a.get("firstMBps"), "%.1f"),
                num(a.get("firstSpeedFactor"), FACTOR), a.get("newestDay"), num(a.get("newestMBps"), "%.1f"),
                num(a.get("newestSpeedFactor"), FACTOR), num(a.get("newestOverFirst"), "%.2fx"));
    }
}
