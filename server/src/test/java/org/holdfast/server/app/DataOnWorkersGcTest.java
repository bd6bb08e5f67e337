package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.GcDeltaSenders;
import org.holdfast.server.ingest.cluster.RangeReferenceGuard;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerRangeSweep;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Distributed GC with the blocks on the workers, end to end in this JVM: a master with
 * {@code holdfast.cluster.data=workers} and GC bookkeeping on, and two workers, as Spring contexts
 * over their real ports; an agent backs up over the ingest port. The master's GC cycle deletes a
 * snapshot its retention no longer keeps, routes the dereferences to the owners (outbox, GC_DELTA),
 * and asks each worker to sweep: exactly the blocks no snapshot references any more are freed on
 * the workers, every retained snapshot restores byte for byte, and a later backup of the freed
 * content stores it again and restores. The master's own data store holds nothing.
 */
class DataOnWorkersGcTest {
    private static final int BS = 4096;
    private static final int HALF = 32;

    @TempDir
    Path data;

    private static String[] args(Path dir, String... more) {
        List<String> a = new ArrayList<>(List.of("--holdfast.data-dir=" + dir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--holdfast.tls.enabled=false", "--spring.main.banner-mode=off", "--holdfast.gc.grace=1ms",
                "--holdfast.gc.interval=1h"));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    private static byte[] random(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static long freedOn(List<ConfigurableApplicationContext> workers) {
        long freed = 0;
        for (ConfigurableApplicationContext w : workers) {
            WorkerRangeSweep.Progress p = w.getBean(WorkerConnector.class).rangeSweep().progress();
            freed += p.last() == null ? 0 : p.last().sweep().freed();
        }
        return freed;
    }

    @Test
    void gcCycle_dataOnWorkers_freesExactlyTheUnreferencedBlocksOnTheirOwners_everyRetainedSnapshotRestores() throws Exception {
        int clusterPort = org.holdfast.common.ports.TestPorts.claim();
        List<ConfigurableApplicationContext> workers = new ArrayList<>();
        try (ConfigurableApplicationContext master = new SpringApplicationBuilder(HoldfastServer.class).run(args(data.resolve("master"),
                "--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=" + clusterPort,
                "--holdfast.cluster.heartbeat-interval=200ms", "--holdfast.dedup.engine=cluster", "--holdfast.cluster.data=workers",
                "--holdfast.gc.default-retention=keep-last=1"))) {
            assertThat(master.getBean(IngestServices.class).referenceGuard()).as("each PBN protected by its owner")
                    .isInstanceOf(RangeReferenceGuard.class);
            String token = master.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("workers", Role.WORKER, VolumeScope.ALL,
                    null, null), "test", "local").token();
            Path tokenFile = Files.writeString(data.resolve("worker.token"), token + "\n");
            for (String node : List.of("gw-1", "gw-2")) {
                ConfigurableApplicationContext w = new SpringApplicationBuilder(HoldfastServer.class).run(args(data.resolve(node),
                        "--holdfast.cluster.role=worker", "--holdfast.cluster.host=127.0.0.1",
                        "--holdfast.cluster.master=127.0.0.1:" + clusterPort, "--holdfast.cluster.token-file=" + tokenFile,
                        "--holdfast.store.s3.node=" + node));
                workers.add(w);
            }
            ClusterServer cluster = master.getBean(ClusterServer.class);
            await().atMost(Duration.ofSeconds(60)).until(() -> workers.stream().allMatch(w -> {
                var a = w.getBean(WorkerConnector.class).status().assignment();
                return a != null && cluster.rangeStores().up(a.workerId()) != null && cluster.gcGuards().up(a.workerId()) != null;
            }));

            byte[] a = random(1, 2 * HALF); // v1's first snapshot: its second half will be referenced by nothing
            byte[] b = random(2, 2 * HALF); // v1's second snapshot replaces every block
            byte[] c = random(3, 2 * HALF); // v2 shares a's first half
            System.arraycopy(a, 0, c, 0, HALF * BS);
            int port = master.getBean(IngestServer.class).port();
            try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                agent.hello();
                agent.backup("v1", a, BS, true);
                agent.backup("v1", b, BS, true);
                agent.backup("v2", c, BS, true);
            }
            assertThat(master.getBean(DataStore.class).stats().appendedBlocks()).as("no block in the master's own store").isZero();
            GcDeltaSenders senders = master.getBean(GcDeltaSenders.class);
            Thread.sleep(50); // the grace (1 ms) of the backups' protection passes

            GcService.CycleReport cycle = master.getBean(GcService.class).runCycle();

            assertThat(cycle.snapshotsDeleted()).as("keep-last=1 keeps v1@2 and v2@1").isEqualTo(1);
            assertThat(freedOn(workers)).as("exactly a's second half: referenced by nothing once v1@1 is gone").isEqualTo(HALF);
            for (ConfigurableApplicationContext w : workers) {
                long id = w.getBean(WorkerConnector.class).status().assignment().workerId();
                assertThat(senders.pending(id)).as("every delta acknowledged before the sweep").isZero();
            }
            byte[] again = a.clone(); // a backup of the freed content stores it again: its fingerprints were forgotten
            try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                agent.hello();
                assertThat(agent.restore("v1", 2).image()).isEqualTo(b);
                assertThat(agent.restore("v2", 1).image()).as("a's first half, shared, kept").isEqualTo(c);
                long seq = agent.backup("v3", again, BS, true).sequence();
                assertThat(agent.restore("v3", seq).image()).isEqualTo(a);
            }
            // fsck and reclaim-now judge the master's GMA alone: refused, saying why
            for (String path : List.of("/api/v1/gc/fsck", "/api/v1/gc/reclaim")) {
                HttpResponse<String> r = post(master, path);
                assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(409);
                assertThat(r.body()).contains("urn:holdfast:problem:data-on-workers");
            }
        } finally {
            workers.forEach(ConfigurableApplicationContext::close);
        }
    }

    private static HttpResponse<String> post(ConfigurableApplicationContext ctx, String path) throws Exception {
        String port = ctx.getEnvironment().getProperty("local.server.port");
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + TestTokens.issue(ctx, Role.ADMIN)).header("Accept", "*/*")
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        return HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
    }
}
