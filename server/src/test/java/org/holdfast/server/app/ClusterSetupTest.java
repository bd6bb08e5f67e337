package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.holdfast.server.cluster.ClusterSetupException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** A worker's settings are checked at start: each mistake is a report naming the setting and the fix, and no link starts. */
class ClusterSetupTest {
    @TempDir
    Path dir;

    private Map<String, String> worker() throws Exception {
        Map<String, String> m = new HashMap<>();
        m.put("holdfast.cluster.role", "worker");
        m.put("holdfast.cluster.master", "master.example:7071");
        m.put("holdfast.cluster.master-fingerprint", "AB".repeat(32));
        m.put("holdfast.cluster.token-file", Files.writeString(dir.resolve("t"), "hft_x").toString());
        m.put("holdfast.store.s3.node", "worker-1");
        return m;
    }

    private static HoldfastProperties bind(Map<String, String> m) {
        return new Binder(new MapConfigurationPropertySource(m)).bindOrCreate("holdfast", HoldfastProperties.class);
    }

    private FailureAnalysis refused(Map<String, String> m) {
        Throwable t = catchThrowable(() -> ClusterConfiguration.worker(bind(m), dir, "test").close());
        assertThat(t).isInstanceOf(ClusterSetupException.class);
        FailureAnalysis a = new ClusterFailureAnalyzer().analyze(new RuntimeException("Error creating bean 'workerConnector'", t));
        assertThat(a.getDescription()).startsWith("Holdfast cannot start in master/worker mode: ");
        assertThat(a.getAction()).contains("holdfast.cluster.").contains("Master/worker mode (preview)");
        return a;
    }

    @Test
    void worker_completeSettings_starts() throws Exception {
        try (var w = ClusterConfiguration.worker(bind(worker()), dir, "test")) {
            assertThat(w.status().connected()).isFalse();
        }
    }

    @Test
    void worker_eachMissingOrWrongSetting_isNamed() throws Exception {
        Map<String, String> m = worker();
        m.remove("holdfast.store.s3.node");
        assertThat(refused(m).getDescription()).contains("set holdfast.store.s3.node");

        m = worker();
        m.put("holdfast.store.s3.node", "a/b");
        assertThat(refused(m).getDescription()).contains("'a/b' cannot name a worker");

        m = worker();
        m.put("holdfast.cluster.master", "master.example");
        assertThat(refused(m).getDescription()).contains("holdfast.cluster.master must be the master's cluster port as host:port");

        m = worker();
        m.put("holdfast.cluster.token-file", dir.resolve("missing").toString());
        assertThat(refused(m).getDescription()).contains("holdfast.cluster.token-file must name a readable file");

        m = worker();
        m.remove("holdfast.cluster.master-fingerprint");
        assertThat(refused(m).getDescription()).contains("holdfast.cluster.master-fingerprint").contains("master-ca-certificate");

        m = worker();
        m.put("holdfast.dedup.engine", "exact");
        assertThat(refused(m).getDescription()).contains("holdfast.dedup.engine=exact cannot serve the master's dedup calls");

        m = worker();
        m.put("holdfast.cluster.master-fingerprint", "not-hex");
        assertThat(refused(m).getDescription()).isNotBlank();
    }

    @Test
    void properties_unknownRole_refusedAtBinding() {
        Throwable t = catchThrowable(() -> bind(Map.of("holdfast.cluster.role", "leader")));
        assertThat(t).hasRootCauseMessage("holdfast.cluster.role must be standalone, master or worker, not 'leader'");
    }

    @Test
    void master_maxNodesPerTokenZeroOrNegative_isRefusedAtStartNamingTheSetting() {
        for (String bad : new String[] {"0", "-3"}) {
            HoldfastProperties p = bind(Map.of("holdfast.cluster.role", "master", "holdfast.cluster.max-nodes-per-token", bad));
            try (org.holdfast.server.store.MetadataDb db = org.holdfast.server.store.MetadataDb.open(dir.resolve("catalog"))) {
                Throwable t = catchThrowable(() -> new ClusterConfiguration().workerRegistry(db, p, java.time.Clock.systemUTC()));
                assertThat(t).isInstanceOf(ClusterSetupException.class)
                        .hasMessageContaining("holdfast.cluster.max-nodes-per-token must be at least 1, got " + bad);
            }
        }
        assertThat(bind(Map.of()).cluster().membership().maxNodesPerToken()).isEqualTo(16);
    }

    @Test
    void properties_noClusterSettings_standaloneAndNothingChanges() {
        HoldfastProperties p = bind(Map.of());
        assertThat(p.cluster().clusterRole()).isEqualTo(org.holdfast.server.cluster.ClusterRole.STANDALONE);
        assertThat(p.cluster().port()).isEqualTo(7071);
        assertThat(p.cluster().membership().lostAfter()).hasSeconds(15);
    }

    private static GcConfiguration.GcProperties gc(String key, String value) {
        return new Binder(new MapConfigurationPropertySource(Map.of("holdfast.gc." + key, value))).bindOrCreate("holdfast.gc",
                GcConfiguration.GcProperties.class);
    }

    @Test
    void sweepSettings_nodeGcSettings_takenAsTheyAre() {
        assertThat(ClusterConfiguration.sweepSettings(gc("compaction-max-bytes", "2GB")))
                .isEqualTo(new org.holdfast.server.ingest.cluster.WorkerRangeSweep.Settings(64, 0.5, 2L << 30));
    }

    @Test
    void sweepSettings_compactionThresholdOverOneOrNoBatch_refusedNamingTheSetting() {
        assertThat(catchThrowable(() -> ClusterConfiguration.sweepSettings(gc("compaction-threshold", "1.5"))))
                .isInstanceOf(ClusterSetupException.class).hasMessageContaining("holdfast.gc.compaction-threshold must be in 0..1");
        assertThat(catchThrowable(() -> ClusterConfiguration.sweepSettings(gc("sweep-batch-chunks", "0"))))
                .isInstanceOf(ClusterSetupException.class).hasMessageContaining("holdfast.gc.sweep-batch-chunks must be at least 1");
    }
}
