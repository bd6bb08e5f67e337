package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.cluster.WorkerBlockHome;
import org.holdfast.server.store.LocalBlockHome;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The wiring of holdfast.cluster.data on a master in this JVM: workers (with GC bookkeeping off)
 * gives the ingest the workers' home and records the mode; the default keeps the master's data
 * store; workers with GC bookkeeping on is refused at start, saying why, with nothing recorded.
 */
class ClusterDataWiringTest {
    @TempDir
    Path data;

    private ConfigurableApplicationContext master(String... extra) {
        String[] base = {"--holdfast.data-dir=" + data, "--server.port=" + TestPorts.claim(), "--server.address=127.0.0.1",
            "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=" + TestPorts.claim(), "--holdfast.tls.enabled=false",
            "--holdfast.store.min-free-space=0", "--spring.main.banner-mode=off", "--holdfast.cluster.role=master",
            "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=" + TestPorts.claim(), "--holdfast.dedup.engine=cluster"};
        String[] all = java.util.Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        return new SpringApplicationBuilder(HoldfastServer.class).run(all);
    }

    @Test
    void start_dataWorkersWithBookkeepingOff_ingestKeepsBlocksOnTheWorkersAndTheModeIsRecorded() {
        try (ConfigurableApplicationContext ctx = master("--holdfast.cluster.data=workers", "--holdfast.gc.bookkeeping=off")) {
            assertThat(ctx.getBean(IngestServices.class).blocks()).isInstanceOf(WorkerBlockHome.class);
            assertThat(ClusterDataMode.recorded(ctx.getBean(MetadataDb.class))).isEqualTo(ClusterDataMode.WORKERS);
        }
    }

    @Test
    void start_default_ingestKeepsBlocksInTheMastersDataStore() {
        try (ConfigurableApplicationContext ctx = master()) {
            assertThat(ctx.getBean(IngestServices.class).blocks()).isInstanceOf(LocalBlockHome.class);
            assertThat(ClusterDataMode.recorded(ctx.getBean(MetadataDb.class))).isEqualTo(ClusterDataMode.MASTER);
        }
    }

    @Test
    void start_dataWorkersWithBookkeepingOn_refusedSayingWhy() {
        assertThatThrownBy(() -> master("--holdfast.cluster.data=workers").close())
                .hasRootCauseInstanceOf(ClusterDataMode.ClusterDataModeException.class)
                .rootCause().hasMessageContaining("needs holdfast.gc.bookkeeping=off");
    }
}
