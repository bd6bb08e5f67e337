package org.holdfast.bench.runner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Ingest with GC bookkeeping on against the same workload on a fresh store with it off: the
 * target's {@code -gc-off} partner of the same engine, TLS and agent mode.
 */
public final class GcOverhead {
    /** The figures compared, each as GC on, GC off and on / off. */
    static final List<String> METRICS = List.of("allBackupsMBps", "allBackupsMBpsInTool", "fullBackupMBpsInTool",
            "incrementalBackupMBpsInTool", "serverCpuSecondsPerGiB");

    private GcOverhead() {
    }

    /** The complete run with GC bookkeeping off that {@code on} is compared with, if the run has one. */
    static Optional<BenchResults.TargetResult> partner(BenchResults.TargetResult on, List<BenchResults.TargetResult> targets) {
        return HoldfastVariant.parse(on.name).filter(HoldfastVariant::gcBookkeeping)
                .map(v -> v.withGcBookkeeping(false).name())
                .flatMap(off -> targets.stream().filter(t -> t.name.equals(off) && t.error == null
                        && t.snapshots.size() == on.snapshots.size() && !t.snapshots.isEmpty()).findFirst());
    }

    /**
     * {@code on} against its GC-off partner: MB/s of each (all backups, on the client's wall clock and
     * on the agent's own clock), the ratio on/off with {@link FigureTarget#GC_BOOKKEEPING}, server CPU
     * seconds per GiB of each, and the commit-thread count. Empty if either run is missing.
     */
    public static Map<String, Object> of(BenchResults.TargetResult on, List<BenchResults.TargetResult> targets) {
        Map<String, Object> c = new LinkedHashMap<>();
        if (on.error != null || on.snapshots.isEmpty()) {
            return c;
        }
        BenchResults.TargetResult off = partner(on, targets).orElse(null);
        if (off == null) {
            return c;
        }
        c.put("engine", HoldfastVariant.parse(on.name).orElseThrow().engine());
        c.put("gcCommitters", on.describe.getOrDefault("gcCommitters", "server default (2)"));
        for (String metric : METRICS) {
            Object a = on.summary.get(metric);
            Object b = off.summary.get(metric);
            if (a instanceof Double x && b instanceof Double y && y > 0) {
                c.put(metric, Map.of("gcOn", x, "gcOff", y, "ratio", x / y));
            }
        }
        Object inTool = c.get("allBackupsMBpsInTool");
        Object headline = inTool != null ? inTool : c.get("allBackupsMBps");
        if (headline instanceof Map<?, ?> m) {
            c.put("basis", inTool != null ? "allBackupsMBpsInTool (agent's clock)" : "allBackupsMBps (client wall clock)");
            c.putAll(FigureTarget.GC_BOOKKEEPING.check(((Number) m.get("ratio")).doubleValue(), off.name));
        } else {
            c.put("against", off.name);
        }
        return c;
    }
}
