package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.bench.runner.TargetResults.summarised;
import static org.holdfast.bench.runner.TargetResults.target;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TargetChecksTest {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> checks(Map<String, Object> checks, String target) {
        return (Map<String, Object>) checks.get(target);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> entry(Map<String, Object> checks, String target, String figure) {
        return (Map<String, Object>) ((Map<String, Object>) checks.get(target)).get(figure);
    }

    /** The targets of {@code --tls off --agent-mode both --gc-overhead --peers restic,borg}. */
    private static List<BenchResults.TargetResult> tlsOffBothModes() {
        return summarised(
                target("holdfast-sungem-tls-off", 60, 1.0, 700),
                target("holdfast-sungem-gc-off-tls-off", 60, 0.9, 700),
                target("holdfast-sungem-tls-off-daemon", 40, 0.5, 700),
                target("holdfast-sungem-gc-off-tls-off-daemon", 40, 0.5, 700),
                target("holdfast-exact-tls-off", 60, 1.0, 690),
                target("holdfast-exact-tls-off-daemon", 50, 0.5, 690),
                target("restic", -1, 4.0, 1000),
                target("borg", -1, 2.0, 900));
    }

    @Test
    void of_tlsOffAndBothAgentModes_everyFigureAgainstTheRightTargetWithIssue14Thresholds() {
        Map<String, Object> c = TargetChecks.of(tlsOffBothModes());

        assertThat(c).containsOnlyKeys("holdfast-sungem-tls-off", "holdfast-sungem-gc-off-tls-off", "holdfast-sungem-tls-off-daemon",
                "holdfast-sungem-gc-off-tls-off-daemon", "holdfast-exact-tls-off", "holdfast-exact-tls-off-daemon");
        // 100 MB/s against borg's 50
        assertThat(entry(c, "holdfast-sungem-tls-off", "fullBackupMBpsVsFasterPeer")).containsEntry("against", "borg")
                .containsEntry("ratio", 2.0).containsEntry("target", 1.5).containsEntry("goal", 2.0).containsEntry("met", true);
        assertThat(entry(c, "holdfast-sungem-tls-off", "incrementalBackupMBpsVsFasterPeer")).containsEntry("target", 2.0)
                .containsEntry("met", true);
        assertThat(entry(c, "holdfast-sungem-tls-off", "restoreNewestMBpsVsFasterPeer")).containsEntry("against", "borg")
                .containsEntry("target", 2.0).containsEntry("met", true);
        assertThat(entry(c, "holdfast-sungem-tls-off", TargetChecks.ALL_BACKUPS)).containsOnlyKeys("against", "ratio");
        // 700 / 900: under 0.8 of the smaller peer
        assertThat(entry(c, "holdfast-sungem-tls-off", "storedVsSmallerPeer")).containsEntry("against", "borg")
                .containsEntry("target", 0.8).containsEntry("targetText", "<= 0.8").containsEntry("met", true);
        assertThat(entry(c, "holdfast-sungem-tls-off", TargetChecks.DEDUP_EFFICIENCY)).containsEntry("against", "holdfast-exact-tls-off")
                .containsEntry("target", 0.99).containsEntry("met", true);
        assertThat(entry(c, "holdfast-sungem-tls-off-daemon", TargetChecks.DEDUP_EFFICIENCY))
                .containsEntry("against", "holdfast-exact-tls-off-daemon").containsEntry("ratio", 0.8).containsEntry("met", false);
        // GC on/off: each agent mode against its own GC-off run; 0.9 s against 1.0 s is 0.9, under 0.95
        assertThat(entry(c, "holdfast-sungem-tls-off", TargetChecks.GC_BOOKKEEPING)).containsEntry("against", "holdfast-sungem-gc-off-tls-off")
                .containsEntry("target", 0.95).containsEntry("met", false);
        assertThat((Double) entry(c, "holdfast-sungem-tls-off", TargetChecks.GC_BOOKKEEPING).get("ratio"))
                .isCloseTo(0.9, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(entry(c, "holdfast-sungem-tls-off-daemon", TargetChecks.GC_BOOKKEEPING))
                .containsEntry("against", "holdfast-sungem-gc-off-tls-off-daemon").containsEntry("ratio", 1.0).containsEntry("met", true);
        // the baselines are not checked against themselves
        assertThat(checks(c, "holdfast-exact-tls-off")).doesNotContainKeys(TargetChecks.DEDUP_EFFICIENCY, TargetChecks.GC_BOOKKEEPING);
        assertThat(checks(c, "holdfast-sungem-gc-off-tls-off")).doesNotContainKey(TargetChecks.GC_BOOKKEEPING);
    }

    @Test
    void of_tlsBoth_theTlsOffTargetHasNoGcFigureAndItsOwnExactBaseline() {
        List<BenchResults.TargetResult> all = summarised(
                target("holdfast-sungem", 60, 1.0, 700),
                target("holdfast-sungem-tls-off", 60, 1.0, 700),
                target("holdfast-sungem-gc-off", 60, 1.0, 700),
                target("holdfast-exact", 80, 1.0, 690),
                target("holdfast-exact-tls-off", 60, 1.0, 690));

        Map<String, Object> c = TargetChecks.of(all);

        assertThat(entry(c, "holdfast-sungem", TargetChecks.GC_BOOKKEEPING)).containsEntry("against", "holdfast-sungem-gc-off");
        assertThat(checks(c, "holdfast-sungem-tls-off")).doesNotContainKey(TargetChecks.GC_BOOKKEEPING)
                .doesNotContainKey("fullBackupMBpsVsFasterPeer");
        assertThat(entry(c, "holdfast-sungem", TargetChecks.DEDUP_EFFICIENCY)).containsEntry("against", "holdfast-exact")
                .containsEntry("ratio", 0.75);
        assertThat(entry(c, "holdfast-sungem-tls-off", TargetChecks.DEDUP_EFFICIENCY)).containsEntry("against", "holdfast-exact-tls-off")
                .containsEntry("ratio", 1.0);
    }

    @Test
    void of_restoreAgainstPeers_comparesTheNewestSnapshotWhichEveryTargetRestored() {
        BenchResults.TargetResult hf = target("holdfast-sungem-tls-off", 60, 1.0, 700);
        // Holdfast's first snapshot restores fast, its newest at 50 MB/s; borg restores its newest at 50 MB/s
        hf.restores.set(0, new BenchResults.RestoreRow("v", 0, 100_000_000, 0.1, -1, 1, true, "a", "a"));
        hf.restores.set(1, new BenchResults.RestoreRow("v", 1, 100_000_000, 2.0, -1, 1, true, "a", "a"));
        Map<String, Object> c = TargetChecks.of(summarised(hf, target("borg", -1, 2.0, 900)));

        assertThat(entry(c, "holdfast-sungem-tls-off", "restoreNewestMBpsVsFasterPeer")).containsEntry("ratio", 1.0)
                .containsEntry("met", false);
    }

    @Test
    void print_tlsOffAndBothAgentModes_everyRowNamesWhatItComparesAndTheThresholds() {
        BenchResults.WorkloadResult w = new BenchResults.WorkloadResult();
        w.name = "edge";
        w.targets.addAll(tlsOffBothModes());
        w.comparison = TargetChecks.of(w.targets);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        ReportTable.print(w, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String report = bytes.toString(StandardCharsets.UTF_8);

        assertThat(report).contains("full backup vs the faster peer >= 1.5 (goal 2)", "incremental vs the faster peer >= 2",
                "restore of the newest snapshot vs the faster peer >= 2", "stored bytes vs the smaller peer <= 0.8",
                "dedup efficiency vs exact >= 0.99", "GC bookkeeping on/off >= 0.95");
        assertThat(report).contains("| holdfast-sungem-tls-off-daemon | 4.00x vs borg: met | 4.00x vs borg: met | 4.00x vs borg | 4.00x vs borg: met"
                + " | 0.78x vs borg: met | 0.800 vs holdfast-exact-tls-off-daemon: NOT met | 1.000 vs holdfast-sungem-gc-off-tls-off-daemon: met |");
        assertThat(report).contains("| holdfast-exact-tls-off |").contains("baseline (exact engine)", "baseline (GC bookkeeping off)");
        assertThat(report).contains("GC overhead of holdfast-sungem-tls-off: ingest with bookkeeping on at 0.900 of off"
                + " (holdfast-sungem-gc-off-tls-off), by allBackupsMBpsInTool (agent's clock) (target >= 0.95: NOT met)");
        assertThat(report).contains("| borg | 0 | 50.0 | n/a | 1 | 50.0 | n/a | 1.00x |");
    }

    @Test
    void figureTargets_thresholdsOfIssue14AndTheirDirection() {
        assertThat(FigureTarget.FULL_BACKUP.met(1.5)).isTrue();
        assertThat(FigureTarget.FULL_BACKUP.met(1.49)).isFalse();
        assertThat(FigureTarget.STORED_BYTES.met(0.8)).isTrue();
        assertThat(FigureTarget.STORED_BYTES.met(0.81)).isFalse();
        assertThat(FigureTarget.DEDUP_EFFICIENCY.met(0.989)).isFalse();
        assertThat(FigureTarget.GC_BOOKKEEPING.text()).isEqualTo(">= 0.95");
        assertThat(FigureTarget.FULL_BACKUP.text()).isEqualTo(">= 1.5 (goal 2)");
    }
}
