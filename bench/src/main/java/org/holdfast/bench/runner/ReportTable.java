package org.holdfast.bench.runner;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** Prints the results as plain-text tables (also pasted into docs/benchmarks.md). */
public final class ReportTable {
    private ReportTable() {
    }

    /** Bytes as MiB with one decimal. */
    public static String mib(long bytes) {
        return bytes < 0 ? "n/a" : String.format("%.1f MiB", bytes / 1048576.0);
    }

    /** A number in {@code fmt}, or n/a for anything else (a missing figure, a reason). */
    static String num(Object o, String fmt) {
        if (o instanceof Number n) {
            return String.format(fmt, n.doubleValue());
        }
        return "n/a";
    }

    private static String speedFactorText(Object o) {
        return o instanceof Number n ? String.format("%.2f MB/region", n.doubleValue()) : String.valueOf(o);
    }

    private static String mibOf(Object o) {
        return o instanceof Number n ? String.format("%.1f", n.doubleValue() / 1048576.0) : "n/a";
    }

    /** The per-target table of one workload, then the per-snapshot table, then the comparison. */
    public static void print(BenchResults.WorkloadResult w, PrintStream out) {
        out.println();
        out.printf("== workload %s (generation %.1f s) ==%n", w.name, w.generationSeconds);
        out.println("| target | logical MiB | changed MiB | sent MiB | stored MiB | dedup ratio | full MB/s | incr MB/s | restore MB/s | client RSS MiB | server RSS MiB | restores identical |");
        out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
        for (BenchResults.TargetResult t : w.targets) {
            Map<String, Object> s = t.summary;
            if (t.snapshots.isEmpty()) {
                out.printf("| %s | %s |%n", t.name, t.error);
                continue;
            }
            Object sent = s.get("sentBytes");
            out.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", t.name,
                    mibOf(s.get("logicalBytes")), mibOf(s.get("changedBytes")),
                    sent instanceof Number n && n.longValue() >= 0 ? mibOf(sent) : "n/a",
                    mibOf(s.get("storedBytes")), num(s.get("dedupRatio"), "%.2f"), num(s.get("fullBackupMBps"), "%.1f"),
                    num(s.get("incrementalBackupMBps"), "%.1f"), num(s.get("restoreMBps"), "%.1f"),
                    mibOf(s.get("clientPeakRssBytes")), mibOf(s.get("serverPeakRssBytes")),
                    s.get("restoresIdentical") + " (" + s.get("restores") + ")" + (t.error != null ? " ERROR: " + t.error : ""));
        }
        for (BenchResults.TargetResult t : w.targets) {
            if (HoldfastVariant.isHoldfast(t.name) && !t.snapshots.isEmpty()) {
                Object gc = t.summary.get("gcOverhead");
                String gcText = gc instanceof Double d ? String.format("%.1f %% of server CPU in GC bookkeeping threads", 100 * d)
                        : String.valueOf(gc);
                out.printf("%s: dedup efficiency %s%s; engine fingerprints/s %s (engine busy time), end-to-end %s"
                                + " (agents' backup seconds); data logs %s MiB;"
                                + " in-tool MB/s full %s, incr %s, restore %s; speed factor %s; GC overhead %s%n",
                        t.name, fmt(t.summary.get("dedupEfficiency")),
                        t.summary.get("dedupEfficiencyAgainst") instanceof String x && !x.equals(t.name) ? " (against " + x + ")" : "",
                        num(t.summary.get("engineFingerprintsPerSecond"), "%.0f"),
                        num(t.summary.get("endToEndFingerprintsPerSecond"), "%.0f"), mibOf(t.summary.get("dataLogBytes")),
                        num(t.summary.get("fullBackupMBpsInTool"), "%.1f"), num(t.summary.get("incrementalBackupMBpsInTool"), "%.1f"),
                        num(t.summary.get("restoreMBpsInTool"), "%.1f"), speedFactorText(t.summary.get("speedFactor")), gcText);
                if (t.summary.containsKey("containersLoaded")) {
                    out.printf("%s: containers loaded %s (%s per GiB changed)%s%n", t.name, num(t.summary.get("containersLoaded"), "%.0f"),
                            num(t.summary.get("containersLoadedPerGiB"), "%.1f"),
                            t.summary.get("againstStandalone") instanceof Map<?, ?> a && a.containsKey("storedBytesRatio")
                                    ? String.format("; against %s: data logs %s, data directory %s, containers loaded %s",
                                            a.get("against"), num(a.get("dataLogBytesRatio"), "%.4fx"), num(a.get("storedBytesRatio"), "%.4fx"),
                                            num(a.get("containersLoadedRatio"), "%.3fx"))
                                    : "");
                }
            } else if (!t.snapshots.isEmpty()) {
                out.printf("%s: in-tool MB/s full %s, incr %s%n", t.name, num(t.summary.get("fullBackupMBpsInTool"), "%.1f"),
                        num(t.summary.get("incrementalBackupMBpsInTool"), "%.1f"));
            }
        }
        TargetChecksTable.print(w, out);
        RestoreAgeTable.print(w, out);
    }

    /** Per-snapshot rows of every target of a workload. */
    public static void printSnapshots(BenchResults.WorkloadResult w, PrintStream out) {
        out.println();
        out.printf("-- %s: per snapshot --%n", w.name);
        out.println("| target | volume | day | changed MiB | zero MiB | sent MiB | stored after MiB | seconds | client RSS MiB |");
        out.println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (BenchResults.TargetResult t : w.targets) {
            for (BenchResults.SnapshotRow r : t.snapshots) {
                out.printf("| %s | %s | %d | %s | %s | %s | %s | %.2f | %s |%n", t.name, r.volume(), r.day(),
                        mibOf(r.changedBytes()), mibOf(r.zeroBytes()), r.sentBytes() < 0 ? "n/a" : mibOf(r.sentBytes()),
                        mibOf(r.storedBytesAfter()), r.seconds(), mibOf(r.clientPeakRssBytes()));
            }
        }
    }

    private static String fmt(Object o) {
        if (o instanceof Double d) {
            return String.format("%.3f", d);
        }
        return String.valueOf(o);
    }

    /** All workloads. */
    public static void print(List<BenchResults.WorkloadResult> ws, PrintStream out, boolean perSnapshot) {
        for (BenchResults.WorkloadResult w : ws) {
            print(w, out);
            if (perSnapshot) {
                printSnapshots(w, out);
            }
        }
    }
}
