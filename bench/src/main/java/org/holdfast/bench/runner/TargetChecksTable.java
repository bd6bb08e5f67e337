package org.holdfast.bench.runner;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** Prints {@link TargetChecks}: one row per Holdfast target, each cell a figure, what it was compared with, and met or not. */
final class TargetChecksTable {
    /** Columns: the key in a target's checks and the figure's target (null: shown without one). */
    private record Column(String key, FigureTarget target, String label) {
    }

    private static final List<Column> COLUMNS = List.of(
            new Column("fullBackupMBpsVsFasterPeer", FigureTarget.FULL_BACKUP, null),
            new Column("incrementalBackupMBpsVsFasterPeer", FigureTarget.INCREMENTAL_BACKUP, null),
            new Column(TargetChecks.ALL_BACKUPS, null, "all backups vs the faster peer (no target)"),
            new Column("restoreNewestMBpsVsFasterPeer", FigureTarget.RESTORE, null),
            new Column("storedVsSmallerPeer", FigureTarget.STORED_BYTES, null),
            new Column(TargetChecks.DEDUP_EFFICIENCY, FigureTarget.DEDUP_EFFICIENCY, null),
            new Column(TargetChecks.GC_BOOKKEEPING, FigureTarget.GC_BOOKKEEPING, null));

    private TargetChecksTable() {
    }

    /** The table of a workload's checks, then the GC on/off detail of each target that has a GC-off partner. */
    static void print(BenchResults.WorkloadResult w, PrintStream out) {
        if (w.comparison.isEmpty()) {
            return;
        }
        out.println("Issue 14 targets (each cell: ratio, what it is compared with, met or not):");
        StringBuilder head = new StringBuilder("| Holdfast target |");
        StringBuilder rule = new StringBuilder("| --- |");
        for (Column c : COLUMNS) {
            head.append(' ').append(c.target() == null ? c.label() : c.target().label() + " " + c.target().text()).append(" |");
            rule.append(" --- |");
        }
        out.println(head);
        out.println(rule);
        for (Map.Entry<String, Object> e : w.comparison.entrySet()) {
            if (e.getValue() instanceof Map<?, ?> checks) {
                out.println(row(e.getKey(), checks, summaryOf(w, e.getKey())));
            }
        }
        for (Map.Entry<String, Object> e : w.comparison.entrySet()) {
            if (e.getValue() instanceof Map<?, ?> checks && checks.get(TargetChecks.GC_BOOKKEEPING) instanceof Map<?, ?> g) {
                printGc(e.getKey(), g, out);
            }
        }
    }

    private static Map<String, Object> summaryOf(BenchResults.WorkloadResult w, String name) {
        return w.targets.stream().filter(t -> t.name.equals(name)).findFirst().map(t -> t.summary).orElse(Map.of());
    }

    /** One target's row; a figure it lacks says why where the summary knows. */
    static String row(String target, Map<?, ?> checks, Map<String, Object> summary) {
        StringBuilder b = new StringBuilder("| ").append(target).append(" |");
        for (Column c : COLUMNS) {
            b.append(' ').append(cell(c, checks.get(c.key()), target, summary)).append(" |");
        }
        return b.toString();
    }

    private static String cell(Column c, Object check, String target, Map<String, Object> summary) {
        if (check instanceof Map<?, ?> m && m.get("ratio") instanceof Number r) {
            String value = c.target() == FigureTarget.DEDUP_EFFICIENCY || c.target() == FigureTarget.GC_BOOKKEEPING
                    ? String.format("%.3f", r.doubleValue()) : String.format("%.2fx", r.doubleValue());
            return value + " vs " + m.get("against") + (m.containsKey("met") ? ": " + (Boolean.TRUE.equals(m.get("met")) ? "met" : "NOT met") : "");
        }
        if (c.target() == FigureTarget.DEDUP_EFFICIENCY) {
            return TargetSummary.isExactName(target) ? "baseline (exact engine)" : String.valueOf(summary.getOrDefault("dedupEfficiency", "n/a"));
        }
        if (c.target() == FigureTarget.GC_BOOKKEEPING) {
            return HoldfastVariant.parse(target).map(HoldfastVariant::gcBookkeeping).orElse(true)
                    ? "n/a: no -gc-off run of this engine, TLS and agent mode" : "baseline (GC bookkeeping off)";
        }
        return "n/a: no peer result";
    }

    /** The GC bookkeeping detail of one target: each figure with GC on, off, and on / off. */
    static void printGc(String target, Map<?, ?> g, PrintStream out) {
        out.printf("GC bookkeeping overhead of %s against %s (holdfast.gc.committers = %s): ingest on / off%n", target,
                g.get("against"), g.get("gcCommitters"));
        out.println("| figure | GC on | GC off | on / off |");
        out.println("| --- | ---: | ---: | ---: |");
        for (String metric : GcOverhead.METRICS) {
            if (g.get(metric) instanceof Map<?, ?> m) {
                out.printf("| %s | %.2f | %.2f | %.3f |%n", metric, ((Number) m.get("gcOn")).doubleValue(),
                        ((Number) m.get("gcOff")).doubleValue(), ((Number) m.get("ratio")).doubleValue());
            }
        }
        if (g.get("ratio") instanceof Number r) {
            out.printf("GC overhead of %s: ingest with bookkeeping on at %.3f of off (%s), by %s (target %s: %s)%n", target,
                    r.doubleValue(), g.get("against"), g.get("basis"), g.get("targetText"),
                    Boolean.TRUE.equals(g.get("met")) ? "met" : "NOT met");
        }
    }
}
