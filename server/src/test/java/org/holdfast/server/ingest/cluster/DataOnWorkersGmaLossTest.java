package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.gc.GcService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A worker whose GC metadata ({@code range-data/gc}) is lost while its range data stays (a disk
 * replaced, a directory removed by hand), in master + 2 workers as Spring contexts in this JVM:
 * the worker opens a fresh, empty GMA over its range and the master sends only the deltas it has
 * not had acknowledged, so every count from before the loss is gone.
 */
class DataOnWorkersGmaLossTest {
    private static final int BS = 4096;

    @TempDir
    static Path data;

    private static ConfigurableApplicationContext master;
    private static final List<ConfigurableApplicationContext> workers = new ArrayList<>();
    private static Path tokenFile;
    private static int clusterPort;

    private static String[] args(Path dir, String... more) {
        List<String> a = new ArrayList<>(List.of("--holdfast.data-dir=" + dir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--holdfast.tls.enabled=false", "--spring.main.banner-mode=off", "--holdfast.gc.grace=1ms",
                "--holdfast.gc.interval=1h"));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    private static ConfigurableApplicationContext worker(String node) {
        return new SpringApplicationBuilder(HoldfastServer.class).run(args(data.resolve(node), "--holdfast.cluster.role=worker",
                "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.master=127.0.0.1:" + clusterPort,
                "--holdfast.cluster.token-file=" + tokenFile, "--holdfast.store.s3.node=" + node));
    }

    private static void awaitRegistered() {
        ClusterServer cluster = master.getBean(ClusterServer.class);
        await().atMost(Duration.ofSeconds(60)).until(() -> workers.stream().allMatch(w -> {
            WorkerRecord a = w.getBean(WorkerConnector.class).status().assignment();
            return a != null && cluster.rangeStores().up(a.workerId()) != null && cluster.gcGuards().up(a.workerId()) != null;
        }));
    }

    @BeforeAll
    static void cluster() throws Exception {
        clusterPort = org.holdfast.common.ports.TestPorts.claim();
        master = new SpringApplicationBuilder(HoldfastServer.class).run(args(data.resolve("master"),
                "--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=" + clusterPort,
                "--holdfast.cluster.heartbeat-interval=200ms", "--holdfast.dedup.engine=cluster", "--holdfast.cluster.data=workers",
                "--holdfast.gc.default-retention=keep-last=1"));
        String token = master.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("workers", Role.WORKER, VolumeScope.ALL,
                null, null), "test", "local").token();
        tokenFile = Files.writeString(data.resolve("worker.token"), token + "\n");
        for (String node : List.of("lw-1", "lw-2")) {
            workers.add(worker(node));
        }
        awaitRegistered();
    }

    @AfterAll
    static void close() {
        workers.forEach(ConfigurableApplicationContext::close);
        if (master != null) {
            master.close();
        }
    }

    private static byte[] random(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static AgentDriver agent() {
        AgentDriver a = new AgentDriver(master.getBean(IngestServer.class).port(), TestTokens.issue(master, Role.AGENT));
        a.hello();
        return a;
    }

    /**
     * "old" is backed up and counted on the workers; their GMAs are then lost. A second volume backs
     * up the same content (dedup: a fresh GMA would count those blocks once, for it alone) and then
     * something else, so the GC cycle deletes its first snapshot: RC 1 - 1 = 0, expired. Without the
     * check the worker freed blocks "old" still references (32 of them, seen before the fix). Now
     * each worker finds its GC metadata created over a range store that already held blocks, marks
     * it ({@link WorkerGcMetadata#COUNTS_LOST}) and refuses every sweep, so nothing is freed.
     */
    @Test
    void sweep_afterTheWorkersGmaWasLost_freesNoBlockAnOlderSnapshotReferences() throws Exception {
        byte[] old = random(31, 32);
        long oldSeq;
        try (AgentDriver agent = agent()) {
            oldSeq = agent.backup("old", old, BS, true).sequence();
        }
        GcDeltaSenders senders = master.getBean(GcDeltaSenders.class);
        for (ConfigurableApplicationContext w : workers) {
            long id = w.getBean(WorkerConnector.class).status().assignment().workerId();
            await().atMost(Duration.ofSeconds(20)).until(() -> senders.pending(id) == 0);
        }
        List<String> nodes = List.of("lw-1", "lw-2");
        boolean[] held = new boolean[workers.size()]; // which workers hold old's blocks when their GC metadata is lost
        for (int i = 0; i < workers.size(); i++) {
            org.holdfast.server.store.DataStore store = workers.get(i).getBean(WorkerRangeData.class).store();
            held[i] = store != null && store.nextPbn() > workers.get(i).getBean(WorkerConnector.class).status().assignment().range().first();
        }
        assertThat(held).as("old's blocks are on some worker").contains(true);
        for (int i = 0; i < workers.size(); i++) {
            workers.get(i).close();
            org.springframework.util.FileSystemUtils.deleteRecursively(data.resolve(nodes.get(i)).resolve("range-data").resolve("gc"));
        }
        for (int i = 0; i < workers.size(); i++) {
            workers.set(i, worker(nodes.get(i)));
        }
        awaitRegistered();
        try (AgentDriver agent = agent()) {
            agent.backup("other", old, BS, true); // matches old's blocks on the workers
            agent.backup("other", random(32, 32), BS, true);
        }
        Thread.sleep(50); // the grace (1 ms) passes

        GcService.CycleReport cycle = master.getBean(GcService.class).runCycle();

        assertThat(cycle.snapshotsDeleted()).as("keep-last=1 deletes other@1").isEqualTo(1);
        for (int i = 0; i < workers.size(); i++) {
            WorkerRangeSweep.Progress p = workers.get(i).getBean(WorkerConnector.class).rangeSweep().progress();
            Path mark = data.resolve(nodes.get(i)).resolve("range-data").resolve("gc").resolve(WorkerGcMetadata.COUNTS_LOST);
            if (held[i]) {
                assertThat(p.last()).as("no sweep ran on " + nodes.get(i)).isNull();
                assertThat(p.lastFailure()).contains("reference counts from before are lost")
                        .as("names the repair without a copy").contains("worker-gc-import");
                assertThat(mark).exists();
            } else {
                assertThat(mark).as(nodes.get(i) + " held no block when its GC metadata was lost: nothing of its counts is missing")
                        .doesNotExist();
            }
        }
        try (AgentDriver agent = agent()) {
            assertThat(agent.restore("old", oldSeq).image()).isEqualTo(old);
        }
    }
}
