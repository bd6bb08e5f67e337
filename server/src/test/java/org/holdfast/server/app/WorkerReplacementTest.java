package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.RangeCopies;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.RangeTakenOverException;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.holdfast.server.verify.Verifier;
import org.holdfast.server.verify.VerifyScope;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Replaceable workers (issue 18), end to end in this JVM: a master with
 * {@code holdfast.cluster.data=workers} and a worker with backend s3 (S3Proxy), as Spring contexts
 * over real ports. Two snapshots are backed up; the worker is stopped and its whole data directory
 * deleted; while no node serves its range the master (with the same bucket settings) restores both
 * snapshots bit for bit and verifies them clean from its read-only copy of the range from the bucket,
 * writing nothing under {@code workers/}; a new worker with the same node name (so the same worker id) on an empty directory takes
 * the range over from the bucket; both snapshots restore byte for byte through it, a third backup
 * commits and restores, the bucket holds the takeover's marker, and a second takeover at that epoch
 * is refused, and the master's copy is gone. Last, the bucket stops answering: the next backup fails saying so, nothing committed.
 */
class WorkerReplacementTest {
    /** The master's lost-after: a copy of a lost worker's range is made once the worker has been away this long. */
    private static final Duration LOST_AFTER = Duration.ofSeconds(5); // above the workers' upload-stall-timeout (3s), as a real master's is
    private static final int BS = 4096;
    static final String PREFIX = "replace/";

    @TempDir
    Path data;

    static String[] args(Path dir, String... more) {
        List<String> a = new ArrayList<>(List.of("--holdfast.data-dir=" + dir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--holdfast.tls.enabled=false", "--spring.main.banner-mode=off", "--holdfast.gc.interval=1h"));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    static String[] s3(S3ProxyFixture s3) {
        return new String[] {"--holdfast.store.backend=s3", "--holdfast.store.s3.endpoint=" + s3.endpoint(),
            "--holdfast.store.s3.bucket=" + s3.bucket(), "--holdfast.store.s3.prefix=" + s3.prefix(PREFIX),
            "--holdfast.store.s3.credentials-file=" + s3.settings("").credentialsFile(), "--holdfast.store.s3.upload-stall-timeout=3s"};
    }

    static byte[] random(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    private ConfigurableApplicationContext worker(Path dir, int clusterPort, Path tokenFile, S3ProxyFixture s3) {
        List<String> a = new ArrayList<>(List.of(args(dir, "--holdfast.cluster.role=worker", "--holdfast.cluster.host=127.0.0.1",
                "--holdfast.cluster.master=127.0.0.1:" + clusterPort, "--holdfast.cluster.token-file=" + tokenFile,
                "--holdfast.store.s3.node=rw-1")));
        a.addAll(List.of(s3(s3)));
        return new SpringApplicationBuilder(HoldfastServer.class).run(a.toArray(String[]::new));
    }

    static long awaitServing(ConfigurableApplicationContext w, ClusterServer cluster) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            var a = w.getBean(WorkerConnector.class).status().assignment();
            return a != null && cluster.rangeStores().up(a.workerId()) != null && cluster.gcGuards().up(a.workerId()) != null;
        });
        return w.getBean(WorkerConnector.class).status().assignment().workerId();
    }

    @Test
    void takeover_newWorkerOnAnEmptyDiskWithTheSameId_everySnapshotRestoresFromTheBucketAndTheNextBackupCommits() throws Exception {
        int clusterPort = org.holdfast.common.ports.TestPorts.claim();
        S3ProxyFixture s3 = S3ProxyFixture.start(data.resolve("s3")); // stopped by the test itself, last
        List<String> masterArgs = new ArrayList<>(List.of("--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1",
                "--holdfast.cluster.port=" + clusterPort, "--holdfast.cluster.heartbeat-interval=200ms", "--holdfast.dedup.engine=cluster",
                "--holdfast.cluster.data=workers", "--holdfast.cluster.late-after=2s", "--holdfast.cluster.lost-after=" + LOST_AFTER.toMillis() + "ms"));
        masterArgs.addAll(List.of(s3(s3))); // the workers' bucket: the master reads a lost worker's range from it
        try (ObjectStore bucket = S3ObjectStore.open(s3.settings(PREFIX));
             ConfigurableApplicationContext master = new SpringApplicationBuilder(HoldfastServer.class).run(args(data.resolve("master"),
                     masterArgs.toArray(String[]::new)))) {
            String token = master.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("workers", Role.WORKER, VolumeScope.ALL,
                    null, null), "test", "local").token();
            Path tokenFile = Files.writeString(data.resolve("worker.token"), token + "\n");
            ClusterServer cluster = master.getBean(ClusterServer.class);
            int port = master.getBean(IngestServer.class).port();
            byte[] a = random(1, 48);
            byte[] b = a.clone();
            System.arraycopy(random(2, 16), 0, b, 16 * BS, 16 * BS); // an incremental: a third of the blocks change
            long id;
            ConfigurableApplicationContext first = worker(data.resolve("worker-old"), clusterPort, tokenFile, s3);
            try {
                id = awaitServing(first, cluster);
                try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                    agent.hello();
                    agent.backup("v1", a, BS, true);
                    agent.backup("v1", b, BS, true);
                }
                assertThat(first.getBean(WorkerRangeData.class).epoch()).isEqualTo(1);
            } finally {
                first.close();
            }
            assertThat(master.getBean(DataStore.class).stats().appendedBlocks()).as("no block in the master's own store").isZero();
            List<String> epochOne = bucket.list(WorkerKeys.space(id, 1) + "/logs/");
            assertThat(epochOne).as("one sealed log per commit on the worker").hasSize(2);
            deleteTree(data.resolve("worker-old")); // the disk is lost
            List<String> objects = bucket.list(WorkerKeys.prefix(id));

            // no node serves the range: the master reads it from the bucket (docs/operations.md "Restore while a worker is dead")
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.rangeStores().up(id) == null);
            Thread.sleep(LOST_AFTER.toMillis() + 200); // a copy is made only once the worker has been away lost-after
            try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                agent.hello();
                assertThat(agent.restore("v1", 1).image()).as("snapshot 1 from the master's bucket copy").isEqualTo(a);
                assertThat(agent.restore("v1", 2).image()).as("snapshot 2 from the master's bucket copy").isEqualTo(b);
            }
            RangeCopies copies = master.getBean(RangeCopies.class);
            assertThat(copies.copied()).containsExactly(id);
            Verifier.Report verified = master.getBean(Verifier.class).run(VerifyScope.all(), true, JobContext.NONE);
            assertThat(verified.blocksRead()).as(verified.toString()).isEqualTo(64);
            assertThat(verified.badBlocks() + verified.unreadableNow()).as(verified.toString()).isZero();
            assertThat(bucket.list(WorkerKeys.prefix(id))).as("the master wrote nothing under workers/").isEqualTo(objects);

            ConfigurableApplicationContext second = worker(data.resolve("worker-new"), clusterPort, tokenFile, s3);
            try {
                assertThat(awaitServing(second, cluster)).as("the same node name: the same worker id and range").isEqualTo(id);
                // the range store opens at registration (before the first data call): wait until it serves
                await().atMost(Duration.ofSeconds(30)).until(() -> second.getBean(WorkerRangeData.class).epoch() == 2);
                byte[] c = b.clone();
                System.arraycopy(random(3, 8), 0, c, 0, 8 * BS);
                try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                    agent.hello();
                    assertThat(agent.restore("v1", 1).image()).as("snapshot 1 from the adopted logs").isEqualTo(a);
                    assertThat(agent.restore("v1", 2).image()).as("snapshot 2 from the adopted logs").isEqualTo(b);
                    long seq = agent.backup("v1", c, BS, true).sequence();
                    assertThat(agent.restore("v1", seq).image()).isEqualTo(c);
                }
                String marker = WorkerKeys.marker(id, 2);
                byte[] text = bucket.getRange(marker, 0, (int) bucket.size(marker).getAsLong());
                assertThat(new String(text, StandardCharsets.UTF_8)).startsWith("holdfast-adopted-logs 1\nworker " + id + "\nepoch 2\n")
                        .contains("log " + epochOne.get(0) + "\n").contains("log " + epochOne.get(1) + "\n").endsWith("end 2\n");
                assertThat(bucket.list(WorkerKeys.space(id, 2) + "/logs/")).as("the third backup's log under the new epoch").hasSize(1);
                assertThatThrownBy(() -> RangeTakeover.claim(new RangeTakeover.Plan(id, 2, List.of()), bucket, data.resolve("scratch")))
                        .isInstanceOf(RangeTakenOverException.class);
                assertThat(copies.copied()).as("the worker's id serves again: the copy is dropped").isEmpty();
                assertThat(data.resolve("master").resolve(RangeCopies.DIRECTORY).resolve("w" + id)).doesNotExist();

                if (s3.external()) {
                    return; // an external store cannot be stopped from here
                }
                s3.close(); // the bucket stops answering: the next commit cannot reach it and fails, saying so
                byte[] d = random(4, 16);
                try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                    agent.hello();
                    agent.begin("v2", BS, d.length, 0);
                    agent.sendEntriesAndBlocks(d, BS, 0, 16, false, null);
                    agent.send(new Commit(d.length));
                    ErrorMessage e = agent.expectErrorAndStop();
                    assertThat(e.message()).contains("object store is not reachable").contains("run the backup again");
                }
                assertThat(master.getBean(Catalog.class).volume(new VolumeId("v2"))).as("nothing committed").isEmpty();
            } finally {
                second.close();
            }
        } finally {
            s3.close(); // again after the test stopped it: a no-op
        }
    }

    static void deleteTree(Path dir) throws Exception {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
