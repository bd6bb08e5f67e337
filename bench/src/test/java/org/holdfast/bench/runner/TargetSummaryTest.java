package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TargetSummaryTest {
    private static BenchResults.TargetResult target(String name, long dupDay1, double seconds, long stored) {
        BenchResults.TargetResult t = new BenchResults.TargetResult();
        t.name = name;
        t.snapshots.add(new BenchResults.SnapshotRow("v", 0, 100_000_000, 100_000_000, 0, seconds, seconds / 2, 1, 10,
                100, 0, stored / 2, "1"));
        t.snapshots.add(new BenchResults.SnapshotRow("v", 1, 100_000_000, 1_000_000, 0, seconds, seconds / 2, 1, 10,
                5, dupDay1, stored, "2"));
        t.restores.add(new BenchResults.RestoreRow("v", 1, 100_000_000, seconds, -1, 1, true, "a", "a"));
        return t;
    }

    @Test
    void of_sungemBesideExact_efficiencyIsTheShareOfExactDuplicatesFound() {
        BenchResults.TargetResult exact = target("holdfast-exact", 80, 1.0, 1000);
        BenchResults.TargetResult sungem = target("holdfast-sungem", 60, 1.0, 1200);
        List<BenchResults.TargetResult> all = List.of(sungem, exact);

        Map<String, Object> s = TargetSummary.of(sungem, all);

        assertThat((Double) s.get("dedupEfficiency")).isEqualTo(0.75);
        assertThat((Double) s.get("fullBackupMBps")).isEqualTo(100.0);
        assertThat((Double) s.get("fullBackupMBpsInTool")).isEqualTo(200.0);
        assertThat(s.get("restoreMBpsInTool")).isNull();
        assertThat(s.get("storedBytes")).isEqualTo(1200L);
        assertThat((Double) s.get("dedupRatio")).isEqualTo(200_000_000 / 1200.0);
    }

    @Test
    void of_regionsReadKnown_speedFactorIsMegabytesRestoredPerRegion() {
        BenchResults.TargetResult sungem = target("holdfast-sungem", 60, 1.0, 1200);
        sungem.restores.clear();
        sungem.restores.add(new BenchResults.RestoreRow("v", 1, 100_000_000, 1.0, -1, 1, true, "a", "a", 40));
        sungem.restores.add(new BenchResults.RestoreRow("v", 0, 100_000_000, 1.0, -1, 1, true, "a", "a", 10));

        Map<String, Object> s = TargetSummary.of(sungem, List.of(sungem));

        assertThat((Double) s.get("speedFactor")).isEqualTo(200.0 / 50);
        assertThat(s.get("restoreRegionsRead")).isEqualTo(50L);
    }

    @Test
    void of_aRestoreWithoutRegionCount_speedFactorIsNotAvailable() {
        BenchResults.TargetResult sungem = target("holdfast-sungem", 60, 1.0, 1200);
        sungem.restores.add(new BenchResults.RestoreRow("v", 0, 100_000_000, 1.0, -1, 1, true, "a", "a", 10));

        assertThat(TargetSummary.of(sungem, List.of(sungem)).get("speedFactor")).asString().startsWith("n/a");
    }

    @Test
    void of_engineFigures_bothRatesCarriedAndMissingOnesNotAvailable() {
        BenchResults.TargetResult sungem = target("holdfast-sungem", 60, 1.0, 1200);
        sungem.server.putAll(EngineRate.of(Map.of(), Map.of("holdfast_dedup_fingerprints_total", 100.0, EngineRate.TIMER, 0.25), 2.0));
        BenchResults.TargetResult old = target("holdfast-exact", 60, 1.0, 1200);

        Map<String, Object> s = TargetSummary.of(sungem, List.of(sungem));

        assertThat(s.get("engineFingerprintsPerSecond")).isEqualTo(400.0);
        assertThat(s.get("endToEndFingerprintsPerSecond")).isEqualTo(50.0);
        assertThat(TargetSummary.of(old, List.of(old)).get("engineFingerprintsPerSecond")).asString().startsWith("n/a");
    }

    @Test
    void of_noExactRun_efficiencyIsNotAvailable() {
        BenchResults.TargetResult sungem = target("holdfast-sungem", 60, 1.0, 1200);

        assertThat(TargetSummary.of(sungem, List.of(sungem)).get("dedupEfficiency")).asString().startsWith("n/a");
    }

    @Test
    void compare_holdfastAgainstPeers_usesTheFasterAndTheSmallerPeer() {
        BenchResults.TargetResult hf = target("holdfast-sungem", 60, 1.0, 900);
        BenchResults.TargetResult restic = target("restic", -1, 4.0, 1000);
        BenchResults.TargetResult borg = target("borg", -1, 2.0, 800);
        List<BenchResults.TargetResult> all = List.of(hf, restic, borg);
        for (BenchResults.TargetResult t : all) {
            t.summary = TargetSummary.of(t, all);
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> c = (Map<String, Object>) TargetSummary.compare(all).get("holdfast-sungem");

        assertThat(c.get("fullBackupMBpsVsFasterPeer")).isEqualTo(Map.of("peer", "borg", "ratio", 2.0, "target", 2.0, "met", true));
        @SuppressWarnings("unchecked")
        Map<String, Object> stored = (Map<String, Object>) c.get("storedVsSmallerPeer");
        assertThat(stored).containsEntry("peer", "borg").containsEntry("met", false);
        assertThat((Double) stored.get("ratio")).isEqualTo(900 / 800.0);
    }

    @Test
    void compare_tlsOffAndDaemonVariants_eachHoldfastTargetAgainstTheFasterPeerOnItsOwnLine() {
        BenchResults.TargetResult tlsOff = target("holdfast-sungem-tls-off", 60, 1.0, 900);
        BenchResults.TargetResult daemon = target("holdfast-exact-daemon", 60, 4.0, 900);
        BenchResults.TargetResult failed = target("holdfast-sungem-tls-off-daemon", 60, 1.0, 900);
        failed.error = "backup failed on day 1: boom";
        BenchResults.TargetResult restic = target("restic", -1, 4.0, 1000);
        BenchResults.TargetResult borg = target("borg", -1, 2.0, 800);
        List<BenchResults.TargetResult> all = List.of(tlsOff, daemon, failed, restic, borg);
        for (BenchResults.TargetResult t : all) {
            t.summary = TargetSummary.of(t, all);
        }

        Map<String, Object> c = TargetSummary.compare(all);

        assertThat(c).containsOnlyKeys("holdfast-sungem-tls-off", "holdfast-exact-daemon");
        @SuppressWarnings("unchecked")
        Map<String, Object> slow = (Map<String, Object>) c.get("holdfast-exact-daemon");
        assertThat(slow.get("fullBackupMBpsVsFasterPeer")).isEqualTo(Map.of("peer", "borg", "ratio", 0.5, "target", 2.0, "met", false));
        String line = ReportTable.againstPeersLine("holdfast-sungem-tls-off", (Map<?, ?>) c.get("holdfast-sungem-tls-off"));
        assertThat(line).startsWith("holdfast-sungem-tls-off against the peers: fullBackupMBpsVsFasterPeer 2.00x borg (target 2.0: met)")
                .contains("storedVsSmallerPeer 1.13x borg (target 1.0: NOT met)").doesNotContain("\n");
    }

    @Test
    void gcOverhead_onAndOffRuns_ratioOnTheAgentClockAndCpuPerGiB() {
        BenchResults.TargetResult on = target("holdfast-sungem", 60, 1.0, 900);
        BenchResults.TargetResult off = target(HoldfastTarget.gcOffName("sungem"), 60, 0.9, 900);
        on.describe.put("gcCommitters", 4);
        on.server.put("serverIngestCpuSeconds", 3.0);
        off.server.put("serverIngestCpuSeconds", 2.0);
        List<BenchResults.TargetResult> all = List.of(on, off);
        for (BenchResults.TargetResult t : all) {
            t.summary = TargetSummary.of(t, all);
        }

        Map<String, Object> g = TargetSummary.gcOverhead(all, "sungem");

        assertThat((Double) g.get("ratio")).isCloseTo(0.9, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(g.get("met")).isEqualTo(false);
        assertThat(g.get("gcCommitters")).isEqualTo(4);
        @SuppressWarnings("unchecked")
        Map<String, Object> cpu = (Map<String, Object>) g.get("serverCpuSecondsPerGiB");
        assertThat((Double) cpu.get("ratio")).isCloseTo(1.5, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(TargetSummary.gcOverhead(List.of(on), "sungem")).isEmpty();
    }

    @Test
    void of_clusterBesideSungem_storedBytesAndContainerLoadsAsRatios() {
        BenchResults.TargetResult sungem = target("holdfast-sungem", 60, 1.0, 1000);
        sungem.server.put("containersLoaded", 40.0);
        sungem.server.put("dataLogBytes", 800L);
        BenchResults.TargetResult cluster = target("holdfast-cluster4", 60, 1.0, 1005);
        cluster.server.put("containersLoaded", 42.0);
        cluster.server.put("dataLogBytes", 804L);

        Map<String, Object> s = TargetSummary.of(cluster, List.of(sungem, cluster));

        assertThat((Double) s.get("containersLoaded")).isEqualTo(42.0);
        // changed bytes: 101 MB over both snapshots
        assertThat((Double) s.get("containersLoadedPerGiB")).isEqualTo(42.0 / (101_000_000 / 1073741824.0));
        @SuppressWarnings("unchecked")
        Map<String, Object> a = (Map<String, Object>) s.get("againstStandalone");
        assertThat((Double) a.get("dataLogBytesRatio")).isEqualTo(1.005);
        assertThat((Double) a.get("storedBytesRatio")).isEqualTo(1.005);
        assertThat((Double) a.get("containersLoadedRatio")).isEqualTo(1.05);
        assertThat(TargetSummary.of(cluster, List.of(cluster)).get("againstStandalone")).asString().contains("n/a");
    }
}
