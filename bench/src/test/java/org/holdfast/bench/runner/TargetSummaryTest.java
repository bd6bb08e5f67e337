package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.bench.runner.TargetResults.target;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TargetSummaryTest {
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

    @Test
    void of_tlsOffAndDaemonVariants_efficiencyAgainstTheExactRunOfTheSameVariant() {
        BenchResults.TargetResult exactOn = target("holdfast-exact", 100, 1.0, 1000);
        BenchResults.TargetResult exactOff = target("holdfast-exact-tls-off", 80, 1.0, 1000);
        BenchResults.TargetResult exactDaemon = target("holdfast-exact-tls-off-daemon", 50, 1.0, 1000);
        BenchResults.TargetResult sungemOff = target("holdfast-sungem-tls-off", 60, 1.0, 1200);
        BenchResults.TargetResult sungemDaemon = target("holdfast-sungem-tls-off-daemon", 40, 1.0, 1200);
        BenchResults.TargetResult gcOff = target("holdfast-sungem-gc-off-tls-off-daemon", 45, 1.0, 1200);
        List<BenchResults.TargetResult> all = List.of(exactOn, sungemOff, sungemDaemon, gcOff, exactOff, exactDaemon);

        Map<String, Object> off = TargetSummary.of(sungemOff, all);
        Map<String, Object> daemon = TargetSummary.of(sungemDaemon, all);
        Map<String, Object> baseline = TargetSummary.of(gcOff, all);

        assertThat(off).containsEntry("dedupEfficiency", 0.75).containsEntry("dedupEfficiencyAgainst", "holdfast-exact-tls-off");
        assertThat(daemon).containsEntry("dedupEfficiency", 0.8).containsEntry("dedupEfficiencyAgainst", "holdfast-exact-tls-off-daemon");
        // GC bookkeeping changes no dedup decision: the GC-off run is measured against the exact run of its TLS and agent mode
        assertThat(baseline).containsEntry("dedupEfficiency", 0.9).containsEntry("dedupEfficiencyAgainst", "holdfast-exact-tls-off-daemon");
        assertThat(TargetSummary.of(exactDaemon, all)).containsEntry("dedupEfficiency", 1.0);
    }

    @Test
    void of_exactRunFailed_efficiencyNotAvailableRatherThanAgainstAnotherVariantsFailure() {
        BenchResults.TargetResult exactOff = target("holdfast-exact-tls-off", 80, 1.0, 1000);
        exactOff.error = "backup failed on day 1: boom";
        BenchResults.TargetResult sungemOff = target("holdfast-sungem-tls-off", 60, 1.0, 1200);

        assertThat(TargetSummary.of(sungemOff, List.of(sungemOff, exactOff)).get("dedupEfficiency")).asString().startsWith("n/a");
    }

    @Test
    void of_clusterWithTlsOff_againstTheSungemRunWithTlsOff() {
        BenchResults.TargetResult sungem = target("holdfast-sungem", 60, 1.0, 2000);
        BenchResults.TargetResult sungemOff = target("holdfast-sungem-tls-off", 60, 1.0, 1000);
        BenchResults.TargetResult cluster = target("holdfast-cluster4-hash-tls-off", 60, 1.0, 1010);

        @SuppressWarnings("unchecked")
        Map<String, Object> a = (Map<String, Object>) TargetSummary.of(cluster, List.of(sungem, sungemOff, cluster)).get("againstStandalone");

        assertThat(a).containsEntry("against", "holdfast-sungem-tls-off").containsEntry("storedBytesRatio", 1.01);
    }
}
