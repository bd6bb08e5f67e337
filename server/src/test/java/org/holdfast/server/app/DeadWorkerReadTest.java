package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.WorkerCapacity;
import org.holdfast.server.cluster.WorkerLoad;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.RangeCopies;
import org.holdfast.server.ingest.cluster.RangeStores;
import org.holdfast.server.ingest.cluster.WorkerBlockHome;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.DamagedBlockException;
import org.holdfast.server.store.FormatVersions;
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
 * A lost worker's blocks read from the bucket (issue 18, docs/operations.md "Restore while a worker
 * is dead"): a master with {@code holdfast.cluster.data=workers} and the workers' bucket, one worker
 * archiving to S3Proxy, as Spring contexts over real ports. The worker stops; a byte of one block is
 * flipped in its bucket object. The master restores the other volume bit for bit from its read-only
 * copy of the range, verify finds that volume clean and the flipped block damaged (never returned), a
 * PBN the copy does not hold is unavailable, and nothing under {@code workers/} in the bucket changes.
 * The worker comes back: reads go to it again and the copy is gone. A master without a bucket says
 * how to fix it.
 */
class DeadWorkerReadTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 32;
    private static final String PREFIX = "deadread/";

    @TempDir
    Path data;

    private static String[] args(Path dir, S3ProxyFixture s3, String... more) {
        List<String> a = new ArrayList<>(List.of("--holdfast.data-dir=" + dir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--holdfast.tls.enabled=false", "--spring.main.banner-mode=off", "--holdfast.gc.interval=1h",
                "--holdfast.verify.schedule=0", "--holdfast.verify.window=0", "--holdfast.store.backend=s3",
                "--holdfast.store.s3.endpoint=" + s3.endpoint(), "--holdfast.store.s3.bucket=" + s3.bucket(),
                "--holdfast.store.s3.prefix=" + s3.prefix(PREFIX), "--holdfast.store.s3.credentials-file=" + s3.settings("").credentialsFile(),
                "--holdfast.store.s3.upload-stall-timeout=3s"));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    private ConfigurableApplicationContext worker(int clusterPort, Path tokenFile, S3ProxyFixture s3) {
        return new SpringApplicationBuilder(HoldfastServer.class).run(args(data.resolve("worker"), s3, "--holdfast.cluster.role=worker",
                "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.master=127.0.0.1:" + clusterPort,
                "--holdfast.cluster.token-file=" + tokenFile, "--holdfast.store.s3.node=dw-1"));
    }

    private static long awaitServing(ConfigurableApplicationContext w, ClusterServer cluster) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            var a = w.getBean(WorkerConnector.class).status().assignment();
            return a != null && cluster.rangeStores().up(a.workerId()) != null;
        });
        return w.getBean(WorkerConnector.class).status().assignment().workerId();
    }

    private static byte[] random(long seed) {
        byte[] b = new byte[BLOCKS * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void lostWorker_masterReadsItsRangeFromTheBucket_bitForBit_aFlippedByteIsDamaged_andTheWorkerBackServesAgain() throws Exception {
        int clusterPort = org.holdfast.common.ports.TestPorts.claim();
        try (S3ProxyFixture s3 = S3ProxyFixture.start(data.resolve("s3"));
             ObjectStore bucket = S3ObjectStore.open(s3.settings(PREFIX));
             ConfigurableApplicationContext master = new SpringApplicationBuilder(HoldfastServer.class).run(args(data.resolve("master"),
                     s3, "--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=" + clusterPort,
                     "--holdfast.cluster.heartbeat-interval=200ms", "--holdfast.dedup.engine=cluster",
                     "--holdfast.cluster.data=workers"))) {
            String token = master.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("workers", Role.WORKER, VolumeScope.ALL,
                    null, null), "test", "local").token();
            Path tokenFile = Files.writeString(data.resolve("worker.token"), token + "\n");
            ClusterServer cluster = master.getBean(ClusterServer.class);
            RangeCopies copies = master.getBean(RangeCopies.class);
            int port = master.getBean(IngestServer.class).port();
            byte[] a = random(1);
            byte[] b = random(2);
            long id;
            ConfigurableApplicationContext w = worker(clusterPort, tokenFile, s3);
            try {
                id = awaitServing(w, cluster);
                try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                    agent.hello();
                    agent.backup("va", a, BS, false); // raw payloads: a block's bytes lie in its log object as they are
                    agent.backup("vb", b, BS, false);
                }
            } finally {
                w.close();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.rangeStores().up(id) == null);
            long[] pbnsB = pbns(master, "vb");
            flipInBucket(bucket, WorkerKeys.prefix(id), Arrays.copyOfRange(b, 7 * BS, 8 * BS));
            List<String> objects = bucket.list(WorkerKeys.prefix(id));

            try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                agent.hello();
                assertThat(agent.restore("va", 1).image()).as("restored from the bucket copy").isEqualTo(a);
            }
            assertThat(copies.copied()).containsExactly(id);
            Path copyDir = data.resolve("master").resolve(RangeCopies.DIRECTORY).resolve("w" + id);
            assertThat(copyDir).isDirectory();
            Verifier verifier = master.getBean(Verifier.class);
            Verifier.Report clean = verifier.run(new VerifyScope("va", null), true, JobContext.NONE);
            assertThat(clean.blocksRead()).as(clean.toString()).isEqualTo(BLOCKS);
            assertThat(clean.badBlocks()).as(clean.toString()).isZero();
            assertThat(clean.unreadableNow()).as(clean.toString()).isZero();

            // the flipped block: damaged, never returned; verify names vb@1 only
            BlockHome home = master.getBean(BlockHome.class);
            BlockBatch batch = new BlockBatch(16, 1 << 20, FormatVersions.MAX_STORED_BYTES);
            assertThatThrownBy(() -> home.readBatch(pbnsB, 7, 1, batch)).isInstanceOf(DamagedBlockException.class)
                    .hasMessageContaining("bucket copy of worker " + id);
            try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                agent.hello();
                assertThatThrownBy(() -> agent.restore("vb", 1)).as("the restore stops, no bytes for LBN 7").isInstanceOf(AssertionError.class);
            }
            Verifier.Report damaged = verifier.run(VerifyScope.all(), true, JobContext.NONE);
            assertThat(damaged.badBlocks()).as(damaged.toString()).isEqualTo(1);
            assertThat(damaged.damagedSnapshots().toString()).contains("vb@1").doesNotContain("va");
            assertThat(damaged.unreadableNow()).as(damaged.toString()).isZero();

            // a PBN of the range the copy does not hold (stored after its last upload, say) is unavailable, not absent
            PbnRange range = copiesRange(master, id);
            long beyond = Arrays.stream(pbnsB).max().orElseThrow() + 1000;
            assertThat(range.contains(beyond)).isTrue();
            assertThatThrownBy(() -> home.readBatch(new long[] {beyond}, 0, 1, batch)).isInstanceOf(BlocksUnavailableException.class)
                    .hasMessageContaining("unavailable, not absent");
            assertThat(bucket.list(WorkerKeys.prefix(id))).as("the master wrote nothing under workers/").isEqualTo(objects);

            // the worker is back: its blocks come from it again, and the copy is dropped
            ConfigurableApplicationContext back = worker(clusterPort, tokenFile, s3);
            try {
                assertThat(awaitServing(back, cluster)).isEqualTo(id);
                try (AgentDriver agent = new AgentDriver(port, TestTokens.issue(master, Role.AGENT))) {
                    agent.hello();
                    assertThat(agent.restore("va", 1).image()).isEqualTo(a);
                }
                assertThat(copies.copied()).isEmpty();
                assertThat(copyDir).doesNotExist();
            } finally {
                back.close();
            }
        }
    }

    @Test
    void lostWorker_masterWithoutBucket_errorSaysHowToFix() {
        PbnRange range = new PbnRange(1L << 40, 2L << 40);
        WorkerView lost = new WorkerView(3, "gone-1", "127.0.0.9", MemberState.LOST, 2, range, 0, WorkerLoad.NONE,
                new WorkerCapacity(1, 0, 0), "", "");
        RangeStores stores = new RangeStores();
        try (RangeCopies copies = new RangeCopies(stores, () -> List.of(lost), null, data.resolve("worker-ranges"))) {
            BlockBatch batch = new BlockBatch(4, 1 << 16, FormatVersions.MAX_STORED_BYTES);
            assertThatThrownBy(() -> new WorkerBlockHome(stores, copies).readBatch(new long[] {range.first() + 5}, 0, 1, batch))
                    .isInstanceOf(BlocksUnavailableException.class).hasMessageContaining("gone-1")
                    .hasMessageContaining("holdfast.store.backend=s3").hasMessageContaining("Restore while a worker is dead");
            assertThat(copies.copied()).isEmpty();
        }
    }

    private static PbnRange copiesRange(ConfigurableApplicationContext master, long id) {
        return master.getBean(org.holdfast.server.cluster.WorkerRegistry.class).workers().stream().filter(v -> v.workerId() == id)
                .findFirst().orElseThrow().range();
    }

    /** Flips one byte in the middle of {@code block}'s bytes in the object under {@code prefix} that holds them (replaced whole). */
    private void flipInBucket(ObjectStore bucket, String prefix, byte[] block) throws Exception {
        for (String key : bucket.list(prefix)) {
            Path f = data.resolve("flip.tmp");
            Files.deleteIfExists(f);
            bucket.download(key, f);
            byte[] content = Files.readAllBytes(f);
            for (int i = 0; i + block.length <= content.length; i++) {
                if (content[i] == block[0] && Arrays.equals(content, i, i + block.length, block, 0, block.length)) {
                    content[i + 100] ^= 0x20;
                    Files.write(f, content);
                    bucket.delete(key);
                    assertThat(bucket.putIfAbsent(key, f)).isTrue();
                    return;
                }
            }
        }
        throw new AssertionError("no object under " + prefix + " holds the block's bytes");
    }

    /** The PBNs of {@code volume}'s snapshot 1, in LBN order. */
    private static long[] pbns(ConfigurableApplicationContext master, String volume) {
        Catalog catalog = master.getBean(Catalog.class);
        VolumeRecord v = catalog.requireVolume(new org.holdfast.common.id.VolumeId(volume));
        long[] out = new long[BLOCKS];
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            c.startScan(1, 0, BLOCKS);
            while (c.nextMapped()) {
                out[(int) c.lbn()] = c.pbn();
            }
        }
        return out;
    }
}
