package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.ForwardingDedupWorker;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.ProbeAnswer;
import org.holdfast.server.engine.SegmentProbe;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code POST /api/v1/cluster/workers/{id}/rebuild} on a master with two workers in this JVM (their
 * own Sungem engines behind real links to the master's cluster port): the refusals (403, 404, 409
 * while a worker is not connected), then a job that teaches worker 2 every block of the master's
 * data store that worker 1 does not hold, under its index key (a block of another dedup domain under
 * its domain key), so that the master's index finds them again; its result and the audit say so.
 */
class WorkerIndexRebuildApiTest {
    private static final int BLOCKS = 3000;
    private static final int HELD_BY_ONE = 1000;
    private static final int DOMAIN_FROM = 2000;
    private static final int DOMAIN_BLOCKS = 100;
    /** Blocks of domain tenant-a a backup still running has stored (synced by another's commit) but not yet recorded. */
    private static final int UNRECORDED = 50;
    @TempDir
    static Path data;
    private static ConfigurableApplicationContext ctx;
    private static HttpClient http;
    private static int port;
    private static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void start() {
        ctx = ClusterDedupMaster.start(data.resolve("master"));
        port = ClusterDedupMaster.port(ctx);
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (ctx != null) {
            ctx.close();
        }
    }

    private static HttpResponse<String> call(String method, String path, String token) {
        return RestCalls.call(http, port, method, path, null, token);
    }

    private static void assertProblem(HttpResponse<String> r, int status, String type, String... detail) throws IOException {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode p = JSON.readTree(r.body());
        assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:" + type);
        assertThat(p.get("detail").asText()).contains(detail);
    }

    /** A worker node in this JVM: its engine in {@code data/<node>}, registered with the master as {@code node}. */
    private static WorkerConnector worker(String node, Path tokenFile, DedupWorker engine) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", ctx.getBean(ClusterServer.class).port(),
                "127.0.0.1", node, tokenFile, (MasterTrust) null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                Duration.ofMillis(200)), new LoadProbe(data), new LazyDedupWorker(0, () -> engine));
        w.start();
        await().atMost(Duration.ofSeconds(15)).until(() -> w.status().connected());
        return w;
    }

    @Test
    void rebuild_refusalsThenAJob_teachesWorkerTwoWhatWorkerOneDoesNotHold() throws Exception {
        String admin = TestTokens.issue(ctx, Role.ADMIN);
        String path = "/api/v1/cluster/workers/2/rebuild";
        assertProblem(call("POST", "/api/v1/cluster/workers/99/rebuild", admin), 404, "unknown-worker", "no worker with id 99");
        JsonNode made = JSON.readTree(RestCalls.call(http, port, "POST", "/api/v1/tokens", "{\"name\":\"workers\",\"role\":\"worker\"}",
                admin).body());
        Path tokenFile = Files.writeString(data.resolve("worker.token"), made.get("token").asText());
        try (LocalDedupWorker one = new LocalDedupWorker(0, data.resolve("w-one"), SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC());
             LocalDedupWorker two = new LocalDedupWorker(0, data.resolve("w-two"), SungemFingerprintIndexTest.smallSettings(),
                     Clock.systemUTC());
             WorkerConnector w1 = worker("w-one", tokenFile, one)) {
            // asked at registration (engine cluster): known before any backup, 0 for an empty index
            JsonNode first = await().atMost(Duration.ofSeconds(10)).until(() -> JSON.readTree(call("GET", "/api/v1/cluster/workers",
                    admin).body()).get(0), w -> !w.get("indexEntries").isNull());
            assertThat(first.get("indexEntries").asLong()).isZero();
            assertThat(first.get("indexReportedAt").asText()).endsWith("Z");
            GatedWorker gate = new GatedWorker(two);
            WorkerConnector w2 = worker("w-two", tokenFile, gate);
            w2.close();
            await().atMost(Duration.ofSeconds(15)).until(() -> JSON.readTree(call("GET", "/api/v1/cluster/workers", admin).body())
                    .get(1).get("state").asText().equals("lost"));
            assertProblem(call("POST", path, admin), 409, "rebuild-refused", "worker 2 (w-two) is not connected; start it");
            assertProblem(call("POST", "/api/v1/cluster/workers/1/rebuild", admin), 409, "rebuild-refused",
                    "worker 2 (w-two) is not connected: what only it holds would be taught to worker 1 as well",
                    "replace it (POST /api/v1/cluster/workers/2/replace, then start the new host)");

            try (WorkerConnector back = worker("w-two", tokenFile, gate)) {
                long[] pbns = storeBlocks();
                assertThat(call("POST", path, TestTokens.issue(ctx, Role.OPERATOR)).statusCode()).isEqualTo(403);
                refusedWhileAGcJobRuns(admin, path);
                HttpResponse<String> started = call("POST", path, admin);
                assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
                long job = JSON.readTree(started.body()).get("id").asLong();
                assertThat(started.headers().firstValue("Location")).hasValue("/api/v1/jobs/" + job);
                JsonNode done = await().atMost(Duration.ofSeconds(60)).until(() -> JSON.readTree(call("GET", "/api/v1/jobs/" + job,
                        admin).body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
                assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("succeeded");
                assertThat(done.get("kind").asText()).isEqualTo("worker-index-rebuild");
                JsonNode r = done.get("result");
                assertThat(r.get("workerId").asLong()).isEqualTo(2);
                assertThat(r.get("blocksRead").asLong()).isEqualTo(BLOCKS + UNRECORDED);
                assertThat(r.get("unrecorded").asLong()).isEqualTo(UNRECORDED);
                assertThat(r.get("taught").asLong()).isEqualTo(BLOCKS - HELD_BY_ONE);
                assertThat(r.get("heldByOthers").asLong()).isEqualTo(HELD_BY_ONE);
                assertThat(r.get("alreadyHeld").asLong()).isZero();
                assertThat(r.get("bytesRead").asLong()).isEqualTo((BLOCKS + UNRECORDED) * 4096L);
                assertThat(done.get("progress").get("itemsDone").asLong()).isEqualTo(BLOCKS + UNRECORDED);
                assertThat(two.load().storedEntries()).isEqualTo(BLOCKS - HELD_BY_ONE);
                // the list shows what each holds, as their last answers (the rebuild's probes and flush) said
                JsonNode listed = JSON.readTree(call("GET", "/api/v1/cluster/workers", TestTokens.issue(ctx, Role.VIEWER)).body());
                assertThat(listed.get(1).get("indexEntries").asLong()).isEqualTo(BLOCKS - HELD_BY_ONE);
                assertThat(listed.get(0).get("indexEntries").asLong()).isEqualTo(one.load().storedEntries()).isPositive();
                assertThat(call("GET", "/actuator/prometheus", TestTokens.issue(ctx, Role.VIEWER)).body())
                        .contains("holdfast_cluster_worker_index_entries{worker=\"2\"} " + (double) (BLOCKS - HELD_BY_ONE));

                // the master's index finds every block again: the domain blocks under their keys, not their fingerprints
                byte[] fps = fingerprints(pbns);
                byte[] keys = fps.clone();
                new DedupDomain("tenant-a").keys(fps, DOMAIN_FROM * 32, keys, DOMAIN_FROM * 32, DOMAIN_BLOCKS);
                long[] found = lookup(java.util.Arrays.copyOf(keys, BLOCKS * 32));
                assertThat(found).containsExactly(java.util.Arrays.copyOf(pbns, BLOCKS));
                long[] byFingerprint = lookup(java.util.Arrays.copyOfRange(fps, DOMAIN_FROM * 32, (DOMAIN_FROM + DOMAIN_BLOCKS) * 32));
                assertThat(byFingerprint).as("a domain block is not indexed under its fingerprint").containsOnly(0L);
                // a block whose domain key is not recorded yet is not taught at all: under its fingerprint a
                // default-domain backup would share another domain's block; its own backup records it at its commit
                assertThat(lookup(java.util.Arrays.copyOfRange(fps, BLOCKS * 32, (BLOCKS + UNRECORDED) * 32)))
                        .as("an unrecorded block of another domain is not indexed under its fingerprint").containsOnly(0L);

                assertThat(JSON.readTree(call("GET", "/api/v1/jobs?kind=worker-index-rebuild", admin).body()).toString())
                        .contains("\"id\":" + job);
                cancelThenRunAgain_teachesNothingTwice(admin, path, gate);
                // GC freeing a taught block afterwards: the forget reaches the rebuilt worker, which stops answering it
                long freed = pbns[DOMAIN_FROM + 1];
                byte[] domainKeys = java.util.Arrays.copyOfRange(keys, DOMAIN_FROM * 32, (DOMAIN_FROM + DOMAIN_BLOCKS) * 32);
                assertThat(lookup(domainKeys)).contains(freed);
                ctx.getBean(FingerprintIndex.class).forgetAll(new long[] {freed}, java.util.Arrays.copyOfRange(domainKeys, 32, 64), 1);
                long[] afterForget = lookup(domainKeys);
                assertThat(afterForget).as("a freed PBN the rebuild taught").doesNotContain(freed);
                assertThat(afterForget[2]).as("the others still found").isEqualTo(pbns[DOMAIN_FROM + 2]);
                freedThenRebuilt_neverTaughtAgain(admin, path, freed, domainKeys);
                cancelledWhileTheWorkerCannotFlush_endsCancelled(admin, path, gate);
                workerLostMidRun_failsSayingWhatToDo(admin, path, gate, w1);
                assertThat(JSON.readTree(call("GET", "/api/v1/audit", admin).body()).get("entries")).anySatisfy(e -> {
                    assertThat(e.get("action").asText()).isEqualTo("cluster.worker.rebuild");
                    assertThat(e.get("result").asText()).isEqualTo("ok");
                    assertThat(e.get("target").asText()).isEqualTo("worker:2");
                });
            }
        }
    }

    /** A GC job in its lane (here one that waits for the test): the rebuild is refused, naming it; nothing queues. */
    private static void refusedWhileAGcJobRuns(String admin, String path) throws Exception {
        Jobs jobs = ctx.getBean(Jobs.class);
        CountDownLatch release = new CountDownLatch(1);
        long gc = jobs.submit(GcJobs.CYCLE, GcJobs.LANE, "test", job -> {
            release.await();
            return Map.of();
        }).id();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> jobs.get(gc).state() == JobState.RUNNING);
            assertProblem(call("POST", path, admin), 409, "rebuild-refused", "job " + gc + " (gc-cycle) is running",
                    "wait until it ends (GET /api/v1/jobs/" + gc + ")");
            assertThat(jobs.list(new Jobs.Query("worker-index-rebuild", null, null, 10)).jobs()).as("nothing queued").isEmpty();
        } finally {
            release.countDown();
        }
        assertThat(jobs.await(gc, Duration.ofSeconds(10)).state()).isEqualTo(JobState.SUCCEEDED);
    }

    /**
     * A rebuild cancelled (while worker 2 answers its first probe) ends cancelled at its next safe
     * point, keeping what it taught; one run again afterwards finds what worker 2 holds and teaches
     * (almost) nothing twice.
     */
    private static void cancelThenRunAgain_teachesNothingTwice(String admin, String path, GatedWorker gate) throws Exception {
        long held = gate.load().storedEntries();
        gate.arm();
        long cancelled = JSON.readTree(call("POST", path, admin).body()).get("id").asLong();
        assertThat(gate.entered.await(20, TimeUnit.SECONDS)).as("the rebuild reached worker 2").isTrue();
        assertThat(call("POST", "/api/v1/jobs/" + cancelled + "/cancel", TestTokens.issue(ctx, Role.OPERATOR)).statusCode())
                .isEqualTo(202);
        gate.release.countDown();
        JsonNode c = await().atMost(Duration.ofSeconds(30)).until(() -> JSON.readTree(call("GET", "/api/v1/jobs/" + cancelled, admin)
                .body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
        assertThat(c.get("state").asText()).as(c.toString()).isEqualTo("cancelled");
        assertThat(c.get("log").toString()).contains("entries taught so far are kept");

        long again = JSON.readTree(call("POST", path, admin).body()).get("id").asLong();
        JsonNode done = await().atMost(Duration.ofSeconds(30)).until(() -> JSON.readTree(call("GET", "/api/v1/jobs/" + again, admin)
                .body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("succeeded");
        JsonNode r = done.get("result");
        assertThat(r.get("heldByOthers").asLong()).isEqualTo(HELD_BY_ONE);
        assertThat(r.get("alreadyHeld").asLong() + r.get("taught").asLong()).isEqualTo(BLOCKS - HELD_BY_ONE);
        assertThat(r.get("taught").asLong()).as("taught again").isLessThan((BLOCKS - HELD_BY_ONE) / 50);
        assertThat(gate.load().storedEntries()).isEqualTo(held + r.get("taught").asLong());
    }

    /**
     * The GC's free of {@code freed} completed as {@code StoreReclaimer} completes it (its location and
     * possession entry go in one batch), then a rebuild: it reads one block fewer and never teaches the
     * freed PBN again (it walks the locations, not the possession column).
     */
    private static void freedThenRebuilt_neverTaughtAgain(String admin, String path, long freed, byte[] domainKeys) throws Exception {
        ctx.getBean(DataStore.class).forget(new long[] {freed}, 1);
        long job = JSON.readTree(call("POST", path, admin).body()).get("id").asLong();
        JsonNode done = await().atMost(Duration.ofSeconds(30)).until(() -> JSON.readTree(call("GET", "/api/v1/jobs/" + job, admin)
                .body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("succeeded");
        assertThat(done.get("result").get("blocksRead").asLong()).isEqualTo(BLOCKS + UNRECORDED - 1);
        assertThat(lookup(domainKeys)).as("a rebuilt index never answers a freed PBN").doesNotContain(freed);
    }

    /**
     * A rebuild cancelled while worker 2 cannot make what it learnt durable (its flush fails) still
     * ends cancelled, as asked, saying what the worker could not keep, instead of failing with the
     * error meant for backups.
     */
    private static void cancelledWhileTheWorkerCannotFlush_endsCancelled(String admin, String path, GatedWorker gate) throws Exception {
        gate.rearm();
        gate.failNextFlush = true;
        long job = JSON.readTree(call("POST", path, admin).body()).get("id").asLong();
        assertThat(gate.entered.await(20, TimeUnit.SECONDS)).as("the rebuild reached worker 2").isTrue();
        assertThat(call("POST", "/api/v1/jobs/" + job + "/cancel", admin).statusCode()).isEqualTo(202);
        gate.release.countDown();
        JsonNode c = await().atMost(Duration.ofSeconds(30)).until(() -> JSON.readTree(call("GET", "/api/v1/jobs/" + job, admin)
                .body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
        assertThat(c.get("state").asText()).as(c.toString()).isEqualTo("cancelled");
        assertThat(c.get("log").toString()).contains("could not make what it learnt durable: dedup worker w-two failed a request")
                .contains("a new rebuild teaches again what it lost").doesNotContain("the backup stops");
        assertThat(gate.failNextFlush).as("the flush was tried").isFalse();
    }

    /** Worker 1 lost while the rebuild runs (its link closes): the job fails naming it and what to do; nothing else breaks. */
    private static void workerLostMidRun_failsSayingWhatToDo(String admin, String path, GatedWorker gate, WorkerConnector w1)
            throws Exception {
        gate.rearm();
        long job = JSON.readTree(call("POST", path, admin).body()).get("id").asLong();
        assertThat(gate.entered.await(20, TimeUnit.SECONDS)).as("the rebuild reached worker 2").isTrue();
        w1.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> ctx.getBean(org.holdfast.server.ingest.cluster.DedupLinks.class).workers()
                .size() == 1);
        gate.release.countDown();
        JsonNode done = await().atMost(Duration.ofSeconds(30)).until(() -> JSON.readTree(call("GET", "/api/v1/jobs/" + job, admin)
                .body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("failed");
        assertThat(done.get("error").asText()).contains("the rebuild of worker 2 stopped after").contains("w-one")
                .contains("once every worker is up again, start the rebuild again").doesNotContain("the backup stops");
    }

    /** Worker 2's engine, which once armed holds its next probe until the test lets it go. */
    private static final class GatedWorker extends ForwardingDedupWorker {
        private volatile boolean armed;
        /** The next flush fails (a worker whose disk is full). */
        volatile boolean failNextFlush;
        volatile CountDownLatch entered = new CountDownLatch(1);
        volatile CountDownLatch release = new CountDownLatch(1);

        GatedWorker(DedupWorker engine) {
            super(engine);
        }

        void arm() {
            armed = true;
        }

        /** Arms it again with new latches. */
        void rearm() {
            entered = new CountDownLatch(1);
            release = new CountDownLatch(1);
            armed = true;
        }

        @Override
        public CompletableFuture<ProbeAnswer> probe(SegmentProbe request) {
            if (armed) {
                armed = false;
                entered.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return delegate.probe(request);
        }

        @Override
        public void flush() {
            if (failNextFlush) {
                failNextFlush = false;
                throw new IllegalStateException("disk full (test)");
            }
            delegate.flush();
        }

        @Override
        public void close() {
            // the test closes the engine
        }
    }

    /** Fingerprint i of the blocks this test stores: SHA-256 of its payload. */
    private static byte[] fingerprints(long[] pbns) throws Exception {
        byte[] fps = new byte[pbns.length * 32];
        for (int i = 0; i < pbns.length; i++) {
            System.arraycopy(MessageDigest.getInstance("SHA-256").digest(payload(i)), 0, fps, i * 32, 32);
        }
        return fps;
    }

    private static byte[] payload(int i) {
        byte[] b = new byte[4096];
        new SplittableRandom(i).nextBytes(b);
        return b;
    }

    /**
     * Stores {@link #BLOCKS} blocks in the master's data store with their possession entries (their
     * domain keys for a stretch of them, as a backup in domain tenant-a records them), then
     * {@link #UNRECORDED} of tenant-a without (a backup still running), and lets the master's
     * index record the first {@link #HELD_BY_ONE} as a backup would: on the least loaded worker, 1.
     */
    private static long[] storeBlocks() throws Exception {
        DataStore store = ctx.getBean(DataStore.class);
        long[] pbns = new long[BLOCKS + UNRECORDED];
        byte[] fps = fingerprints(pbns);
        for (int i = 0; i < pbns.length; i++) {
            byte[] p = payload(i);
            pbns[i] = store.append(fps, i * 32, p, 0, p.length, FormatVersions.CODEC_RAW, p.length);
        }
        store.sync();
        long[] domainPbns = java.util.Arrays.copyOfRange(pbns, DOMAIN_FROM, DOMAIN_FROM + DOMAIN_BLOCKS);
        byte[] domainKeys = new byte[DOMAIN_BLOCKS * 32];
        new DedupDomain("tenant-a").keys(fps, DOMAIN_FROM * 32, domainKeys, 0, DOMAIN_BLOCKS);
        store.possession().putAll(domainPbns, new byte[DOMAIN_BLOCKS * 16], domainKeys, DOMAIN_BLOCKS);
        long[] plain = java.util.stream.LongStream.concat(java.util.Arrays.stream(pbns, 0, DOMAIN_FROM),
                java.util.Arrays.stream(pbns, DOMAIN_FROM + DOMAIN_BLOCKS, BLOCKS)).toArray();
        store.possession().putAll(plain, new byte[plain.length * 16], null, plain.length);
        try (DedupStream s = ctx.getBean(FingerprintIndex.class).openStream("v")) {
            long[] found = new long[HELD_BY_ONE];
            s.lookup(fps, HELD_BY_ONE, found);
            assertThat(found).containsOnly(0L);
            boolean[] isNew = new boolean[HELD_BY_ONE];
            java.util.Arrays.fill(isNew, true);
            s.record(fps, HELD_BY_ONE, java.util.Arrays.copyOf(pbns, HELD_BY_ONE), isNew);
        }
        return pbns;
    }

    /** The master index's answer for {@code keys}. */
    private static long[] lookup(byte[] keys) {
        int n = keys.length / 32;
        long[] found = new long[n];
        try (DedupStream s = ctx.getBean(FingerprintIndex.class).openStream("v")) {
            for (int from = 0; from < n; from += 256) {
                int m = Math.min(256, n - from);
                long[] part = new long[m];
                s.lookup(java.util.Arrays.copyOfRange(keys, from * 32, (from + m) * 32), m, part);
                System.arraycopy(part, 0, found, from, m);
            }
        }
        return found;
    }
}
