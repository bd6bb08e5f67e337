package org.holdfast.bench.runner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Totals and rates of one target on one workload ({@link TargetChecks} compares them with the targets).
 *
 * <p>Throughputs are logical bytes (the whole volume) per second of the client process's wall
 * time, start-up included, because that is what an operator waits for; first full backups and
 * incrementals are reported apart. The dedup ratio is the logical bytes of all snapshots over
 * the bytes the repository takes on disk at the end.
 */
public final class TargetSummary {
    static final String SPEED_FACTOR_NA = "n/a: the server did not report data-log regions read (holdfast_store_regions_read_total)";
    static final String GC_NA = "n/a: no GC bookkeeping threads (gma-*) found in the server";
    private static final String EXACT = "exact";

    private TargetSummary() {
    }

    /** The summary map of one target; {@code all} gives the exact-engine run for dedup efficiency. */
    public static Map<String, Object> of(BenchResults.TargetResult t, List<BenchResults.TargetResult> all) {
        Map<String, Object> s = new LinkedHashMap<>();
        if (t.snapshots.isEmpty()) {
            s.put("status", t.error == null ? "no data" : t.error);
            return s;
        }
        long logical = 0;
        long changed = 0;
        long sent = 0;
        boolean sentKnown = true;
        long fullBytes = 0;
        double fullSec = 0;
        long incBytes = 0;
        double incSec = 0;
        long clientRss = 0;
        double fullTool = 0;
        double incTool = 0;
        boolean toolKnown = true;
        for (BenchResults.SnapshotRow r : t.snapshots) {
            toolKnown &= r.toolSeconds() >= 0;
            if (r.day() == 0) {
                fullTool += r.toolSeconds();
            } else {
                incTool += r.toolSeconds();
            }
            logical += r.logicalBytes();
            changed += r.changedBytes();
            if (r.sentBytes() < 0) {
                sentKnown = false;
            } else {
                sent += r.sentBytes();
            }
            if (r.day() == 0) {
                fullBytes += r.logicalBytes();
                fullSec += r.seconds();
            } else {
                incBytes += r.logicalBytes();
                incSec += r.seconds();
            }
            clientRss = Math.max(clientRss, r.clientPeakRssBytes());
        }
        long stored = t.snapshots.get(t.snapshots.size() - 1).storedBytesAfter();
        long restoreBytes = 0;
        double restoreSec = 0;
        double restoreTool = 0;
        boolean restoreToolKnown = !t.restores.isEmpty();
        boolean identical = !t.restores.isEmpty();
        long regions = 0;
        boolean regionsKnown = !t.restores.isEmpty();
        for (BenchResults.RestoreRow r : t.restores) {
            regionsKnown &= r.regionsRead() >= 0;
            regions += Math.max(0, r.regionsRead());
            restoreToolKnown &= r.toolSeconds() >= 0;
            restoreTool += r.toolSeconds();
            restoreBytes += r.bytes();
            restoreSec += r.seconds();
            identical &= r.identical();
            clientRss = Math.max(clientRss, r.clientPeakRssBytes());
        }
        s.put("status", t.error == null ? "ok" : t.error);
        s.put("snapshots", t.snapshots.size());
        s.put("logicalBytes", logical);
        s.put("changedBytes", changed);
        s.put("sentBytes", sentKnown ? sent : -1);
        s.put("storedBytes", stored);
        s.put("dedupRatio", stored > 0 ? (double) logical / stored : null);
        s.put("fullBackupMBps", rate(fullBytes, fullSec));
        s.put("incrementalBackupMBps", rate(incBytes, incSec));
        s.put("allBackupsMBps", rate(fullBytes + incBytes, fullSec + incSec));
        s.put("backupSeconds", fullSec + incSec);
        s.put("restores", t.restores.size());
        s.put("restoreMBps", rate(restoreBytes, restoreSec));
        // The tools' own clocks leave out process start-up (JVM, Python), which weighs on small volumes.
        s.put("fullBackupMBpsInTool", toolKnown ? rate(fullBytes, fullTool) : null);
        s.put("incrementalBackupMBpsInTool", toolKnown ? rate(incBytes, incTool) : null);
        s.put("restoreMBpsInTool", restoreToolKnown ? rate(restoreBytes, restoreTool) : null);
        s.put("allBackupsMBpsInTool", toolKnown ? rate(fullBytes + incBytes, fullTool + incTool) : null);
        s.put("restoresIdentical", identical);
        s.put("clientPeakRssBytes", clientRss);
        Object serverRss = t.server.get("serverPeakRssBytes");
        if (serverRss != null) {
            s.put("serverPeakRssBytes", serverRss);
        }
        s.put("restoreNewestVsFirst", RestoreAge.of(t));
        Optional<HoldfastVariant> variant = HoldfastVariant.parse(t.name);
        if (variant.isPresent()) {
            s.put("dataLogBytes", t.server.getOrDefault("dataLogBytes", -1L));
            BenchResults.TargetResult exact = isExactName(t.name) ? t : exactPartner(t, all);
            s.put("dedupEfficiency", efficiency(t, exact));
            s.put("dedupEfficiencyAgainst", exact == null ? null : exact.name);
            s.put("engineFingerprintsPerSecond", t.server.getOrDefault("engineFingerprintsPerSecond", EngineRate.NO_COUNTER));
            s.put("endToEndFingerprintsPerSecond", t.server.getOrDefault("endToEndFingerprintsPerSecond", EngineRate.NO_COUNTER));
            if (t.server.get("containersLoaded") instanceof Double loaded) {
                s.put("containersLoaded", loaded);
                s.put("containersLoadedPerGiB", changed > 0 ? loaded / (changed / 1073741824.0) : null);
            }
            if (variant.get().engine().startsWith("cluster")) {
                s.put("againstStandalone", againstStandalone(t, all));
            }
            s.put("speedFactor", regionsKnown ? speedFactor(restoreBytes, regions) : SPEED_FACTOR_NA);
            s.put("restoreRegionsRead", regionsKnown ? regions : -1);
            Object gc = t.server.get("gcOverhead");
            s.put("gcOverhead", gc != null ? gc : GC_NA);
            s.put("serverCpuSeconds", t.server.getOrDefault("serverCpuSeconds", -1.0));
            Object ingestCpu = t.server.get("serverIngestCpuSeconds");
            if (ingestCpu instanceof Double c && c >= 0 && logical > 0) {
                s.put("serverIngestCpuSeconds", c);
                s.put("serverCpuSecondsPerGiB", c / (logical / 1073741824.0));
            }
        }
        return s;
    }

    /**
     * A master/worker target ({@code holdfast-cluster...}) against standalone Sungem on the same
     * stream (the sungem run most like it: same TLS and agent mode), as ratios: data-log bytes (the
     * blocks stored: issue 18 asks within 1 %), the whole data directory (which also holds every
     * worker's engine files), and containers loaded (at most 1.05).
     */
    public static Map<String, Object> againstStandalone(BenchResults.TargetResult t, List<BenchResults.TargetResult> all) {
        Map<String, Object> c = new LinkedHashMap<>();
        BenchResults.TargetResult sungem = HoldfastVariant.parse(t.name)
                .flatMap(v -> v.closest("sungem", all.stream().filter(x -> x.error == null && !x.snapshots.isEmpty()).toList()))
                .orElse(null);
        if (sungem == null || t.snapshots.isEmpty()) {
            c.put("status", "n/a: no run of holdfast-sungem on the same stream");
            return c;
        }
        c.put("against", sungem.name);
        long mine = t.snapshots.get(t.snapshots.size() - 1).storedBytesAfter();
        long base = sungem.snapshots.get(sungem.snapshots.size() - 1).storedBytesAfter();
        if (t.server.get("dataLogBytes") instanceof Number a && sungem.server.get("dataLogBytes") instanceof Number b
                && a.longValue() >= 0 && b.longValue() > 0) {
            c.put("dataLogBytesRatio", a.doubleValue() / b.doubleValue());
        }
        c.put("storedBytesRatio", base > 0 ? (double) mine / base : null);
        if (t.server.get("containersLoaded") instanceof Double a && sungem.server.get("containersLoaded") instanceof Double b) {
            c.put("containersLoadedRatio", b > 0 ? a / b : null);
        }
        return c;
    }

    /**
     * The exact-engine run {@code t}'s dedup efficiency is measured against: the complete one most like
     * {@code t} (same TLS and agent mode, see {@link HoldfastVariant#closest}); null if there is none.
     */
    static BenchResults.TargetResult exactPartner(BenchResults.TargetResult t, List<BenchResults.TargetResult> all) {
        HoldfastVariant v = HoldfastVariant.parse(t.name).orElse(null);
        if (v == null) {
            return null;
        }
        return v.closest(EXACT, all.stream().filter(x -> x.error == null && x.snapshots.size() == t.snapshots.size()).toList())
                .orElse(null);
    }

    private static Object efficiency(BenchResults.TargetResult t, BenchResults.TargetResult exact) {
        if (isExactName(t.name)) {
            return 1.0;
        }
        if (exact == null) {
            return "n/a: no complete run with the exact engine on the same stream";
        }
        long mine = 0;
        long base = 0;
        for (int i = 0; i < t.snapshots.size(); i++) {
            long a = t.snapshots.get(i).duplicateBlocks();
            long b = exact.snapshots.get(i).duplicateBlocks();
            if (a < 0 || b < 0) {
                return "n/a: the agent's summary does not report duplicate (or new) blocks";
            }
            mine += a;
            base += b;
        }
        return base == 0 ? "n/a: the exact engine found no duplicates" : (double) mine / base;
    }

    /** Whether the target named {@code name} runs the exact engine (the baseline of dedup efficiency). */
    static boolean isExactName(String name) {
        return HoldfastVariant.parse(name).map(v -> v.engine().equals(EXACT)).orElse(false);
    }

    private static Double rate(long bytes, double seconds) {
        return seconds > 0 ? bytes / 1e6 / seconds : null;
    }

    /** MB (10^6 bytes) restored per data-log region read; a restore that read nothing (all zero) has no factor. */
    static Object speedFactor(long restoredBytes, long regions) {
        return regions > 0 ? restoredBytes / 1e6 / regions : "n/a: the restores read no data-log region (all-zero volumes)";
    }
}
