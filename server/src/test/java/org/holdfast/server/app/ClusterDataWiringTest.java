package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.common.protocol.Register;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.GcDeltaSenders;
import org.holdfast.server.ingest.cluster.RangeReferenceGuard;
import org.holdfast.server.ingest.cluster.WorkerBlockHome;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.LocalBlockHome;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The wiring of holdfast.cluster.data on a master in this JVM: workers (with GC bookkeeping off)
 * gives the ingest the workers' home, records the mode and serves verify and the image API (they read through the home);
 * the GC routes through the outbox senders with workers, not by default;
 * the default keeps the master's data store and serves verify; workers with GC bookkeeping on protects each PBN on its owner
 * and refuses fsck and reclaim-now (the master's GMA counts only its own range).
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
    void start_dataWorkersWithBookkeepingOff_ingestKeepsBlocksOnTheWorkersTheModeIsRecordedAndVerifyServed() throws Exception {
        try (ConfigurableApplicationContext ctx = master("--holdfast.cluster.data=workers", "--holdfast.gc.bookkeeping=off")) {
            assertThat(ctx.getBean(IngestServices.class).blocks()).isInstanceOf(WorkerBlockHome.class);
            assertThat(ClusterDataMode.recorded(ctx.getBean(MetadataDb.class))).isEqualTo(ClusterDataMode.WORKERS);
            assertThat(ctx.getBean(GcDeltaSenders.class).started()).as("the GC routes through the outbox senders").isTrue();
            // verify and the image API read the blocks from the workers (the home): served, not refused
            HttpResponse<String> status = call(ctx, "GET", "/api/v1/verify");
            assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
            for (String[] req : new String[][] {{"GET", "/api/v1/volumes/v/snapshots/1/image"},
                    {"POST", "/api/v1/volumes/v/snapshots/1/image/link"}}) {
                HttpResponse<String> r = call(ctx, req[0], req[1]);
                assertThat(r.statusCode()).as(req[0] + " " + req[1] + ": " + r.body()).isEqualTo(404);
                assertThat(r.body()).contains("unknown-volume").doesNotContain("data-on-workers");
            }
        }
    }

    @Test
    void start_dataWorkersWithTrailingSpace_ingestKeepsBlocksOnTheWorkersAsRecorded() {
        // the mode parses leniently; the home must follow the recorded mode, not the raw property text
        try (ConfigurableApplicationContext ctx = master("--holdfast.cluster.data=workers ", "--holdfast.gc.bookkeeping=off")) {
            assertThat(ClusterDataMode.recorded(ctx.getBean(MetadataDb.class))).isEqualTo(ClusterDataMode.WORKERS);
            assertThat(ctx.getBean(IngestServices.class).blocks()).isInstanceOf(WorkerBlockHome.class);
            assertThat(ctx.getBean(ClusterServer.class).minClusterVersion()).as("workers too old for the GC frames refused")
                    .isEqualTo(Register.GC_FRAMES_VERSION);
        }
    }

    @Test
    void start_default_verifyIsServed() throws Exception {
        try (ConfigurableApplicationContext ctx = master()) {
            HttpResponse<String> r = call(ctx, "GET", "/api/v1/verify");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    private static HttpResponse<String> call(ConfigurableApplicationContext ctx, String method, String path) throws Exception {
        String port = ctx.getEnvironment().getProperty("local.server.port");
        String token = TestTokens.issue(ctx, Role.ADMIN);
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + token)
                .header("Accept", "*/*").method(method, HttpRequest.BodyPublishers.noBody()).build();
        return HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void start_default_ingestKeepsBlocksInTheMastersDataStore() {
        try (ConfigurableApplicationContext ctx = master()) {
            assertThat(ctx.getBean(IngestServices.class).blocks()).isInstanceOf(LocalBlockHome.class);
            assertThat(ClusterDataMode.recorded(ctx.getBean(MetadataDb.class))).isEqualTo(ClusterDataMode.MASTER);
            assertThat(ctx.getBean(GcDeltaSenders.class).started()).as("the GC keeps its local bookkeeping").isFalse();
            assertThat(ctx.getBean(ClusterServer.class).minClusterVersion()).as("every cluster version accepted")
                    .isEqualTo(Register.MIN_CLUSTER_VERSION);
        }
    }

    @Test
    void start_dataWorkersWithBookkeepingOn_guardsOnTheOwnersReclaimNowRefusedFsckChecksTheWorkers() throws Exception {
        try (ConfigurableApplicationContext ctx = master("--holdfast.cluster.data=workers")) {
            assertThat(ctx.getBean(IngestServices.class).referenceGuard()).isInstanceOf(RangeReferenceGuard.class);
            assertThat(ctx.getBean(GcDeltaSenders.class).started()).isTrue();
            // removing a worker would take the only copy of its range's blocks with it
            for (String[] req : new String[][] {{"POST", "/api/v1/gc/reclaim"},
                    {"DELETE", "/api/v1/cluster/workers/1"}}) {
                HttpResponse<String> r = call(ctx, req[0], req[1]);
                assertThat(r.statusCode()).as(req[0] + " " + req[1] + ": " + r.body()).isEqualTo(409);
                assertThat(r.body()).contains("urn:holdfast:problem:data-on-workers");
            }
            assertThat(call(ctx, "GET", "/api/v1/gc/status").statusCode()).as("GC itself runs").isEqualTo(200);
            // fsck checks the workers' GC counts (none registered here); a worker the master does not have is refused
            assertThat(call(ctx, "POST", "/api/v1/gc/fsck").statusCode()).isEqualTo(202);
            HttpResponse<String> unknown = call(ctx, "POST", "/api/v1/gc/fsck?worker=99");
            assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);
            assertThat(unknown.body()).contains("no worker with id 99");
        }
    }
}
