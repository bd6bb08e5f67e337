package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A worker process sweeps its range with its own node's GC settings ({@code holdfast.gc.sweep-batch-chunks},
 * {@code compaction-threshold}, {@code compaction-max-bytes}), not the standalone defaults: a worker
 * as a Spring context in this JVM (TLS off) registered with a test master's cluster port; with
 * compaction threshold 0 its sweep answers that no compaction ran.
 */
class WorkerSweepSettingsContextTest {
    @TempDir
    Path data;

    @Test
    void sweep_workerWithCompactionThresholdZero_usesTheNodeSettingsAndRunsNoCompaction() throws Exception {
        try (TestMaster master = new TestMaster(data.resolve("master"), new MembershipSettings(Duration.ofMillis(200),
                Duration.ofSeconds(2), Duration.ofSeconds(10), MembershipSettings.DEFAULT_FIRST_PBN,
                MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE)) {
            String token = master.tokens.issue(new ApiTokens.TokenRequest("workers", Role.WORKER, null, null, null), "test", "test").token();
            Path tokenFile = Files.writeString(data.resolve("worker.token"), token + "\n");
            try (ConfigurableApplicationContext worker = new SpringApplicationBuilder(HoldfastServer.class).run(List.of(
                    "--holdfast.data-dir=" + data.resolve("worker"), "--server.port=0", "--server.address=127.0.0.1",
                    "--holdfast.tls.enabled=false", "--holdfast.store.min-free-space=0", "--spring.main.banner-mode=off",
                    "--holdfast.cluster.role=worker", "--holdfast.cluster.host=127.0.0.1",
                    "--holdfast.cluster.master=127.0.0.1:" + master.server.port(), "--holdfast.cluster.token-file=" + tokenFile,
                    "--holdfast.store.s3.node=sweep-1", "--holdfast.gc.compaction-threshold=0", "--holdfast.gc.sweep-batch-chunks=7",
                    "--holdfast.gc.compaction-max-bytes=1GB").toArray(String[]::new))) {
                WorkerConnector connector = worker.getBean(WorkerConnector.class);
                assertThat(connector.rangeSweep().settings()).as("the node's holdfast.gc.* settings")
                        .isEqualTo(new WorkerRangeSweep.Settings(7, 0, 1L << 30));
                await().atMost(Duration.ofSeconds(30)).until(() -> connector.status().connected()
                        && master.server.rangeSweeps().up(connector.status().assignment().workerId()) != null);
                GcSwept swept = master.server.rangeSweeps().up(connector.status().assignment().workerId())
                        .sweep(GcSweep.NO_TIME, false).join();
                assertThat(swept.dryRun()).isFalse();
                assertThat(swept.bytesFreed()).as("compaction threshold 0: no compaction ran").isEqualTo(GcSwept.UNKNOWN_BYTES);
            }
        }
    }
}
