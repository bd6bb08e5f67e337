package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import java.util.SortedMap;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replacing a lost worker with a new node ({@code WorkerRegistry.replace}, what {@code POST
 * /api/v1/cluster/workers/{id}/replace} does): real workers ({@link WorkerConnector}) against a real
 * cluster port, real tokens and the catalog on disk, real dedup engines on disk.
 */
class WorkerReplaceTest {
    private static final int N = 50;
    private static final SungemSettings SETTINGS = SungemFingerprintIndexTest.smallSettings();

    @TempDir
    Path dir;
    private TestMaster master;

    @BeforeEach
    void start() {
        open();
    }

    /** A master start on the catalog in {@code dir}. */
    private void open() {
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofMillis(100), Duration.ofMillis(400),
                Duration.ofSeconds(2), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE);
    }

    @AfterEach
    void stop() {
        master.close();
    }

    /** A new worker token of its own host, written to a file. */
    private Path issue(String host) throws Exception {
        String token = master.tokens.issue(new ApiTokens.TokenRequest(host, Role.WORKER, null, null, null), "test", "test").token();
        return Files.writeString(dir.resolve(host + ".token"), token);
    }

    /** Worker {@code node} with {@code tokenFile}, serving dedup calls with {@code engine} (null: none), once registered. */
    private WorkerConnector registered(String node, Path tokenFile, LazyDedupWorker engine) {
        WorkerConnector w = new WorkerConnector(master.linkSettings(node, tokenFile), new LoadProbe(dir), engine);
        w.start();
        // the master adds the dedup link right after sending REGISTERED; the worker may not have read it yet
        await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected()
                && master.server.dedupLinks().upByWorkerId().containsKey(w.status().assignment().workerId()));
        return w;
    }

    /** Stops worker {@code w} (and its engine) and waits until the master counts it lost. */
    private void stopAndLose(WorkerConnector w, LazyDedupWorker engine) {
        long id = w.status().assignment().workerId();
        w.close();
        if (engine != null) {
            engine.close();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> master.registry.state(id) == MemberState.LOST);
    }

    private static LazyDedupWorker engine(Path index) {
        return new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index, SETTINGS, Clock.systemUTC()));
    }

    private String nodeServing(long workerId) {
        SortedMap<Long, RemoteDedupWorker> up = master.server.dedupLinks().upByWorkerId();
        return up.containsKey(workerId) ? up.get(workerId).link().name() : null;
    }

    @Test
    void replace_newNodeWithAnotherTokenTakesTheIdAndRangeAtEpochPlusOne_andTheOldNodeComesBackAsANewWorker() throws Exception {
        Path oldToken = issue("host-a");
        Path newToken = issue("host-b");
        WorkerConnector old = registered("w1", oldToken, null);
        WorkerRecord lost = old.status().assignment();
        stopAndLose(old, null);

        master.registry.replace(lost.workerId(), "w9");
        try (WorkerConnector replacement = registered("w9", newToken, null)) {
            WorkerRecord taken = replacement.status().assignment();
            assertThat(taken.workerId()).isEqualTo(lost.workerId());
            assertThat(taken.range()).isEqualTo(lost.range());
            assertThat(taken.epoch()).isEqualTo(lost.epoch() + 1);
            assertThat(master.store.workers()).singleElement().satisfies(r -> {
                assertThat(r.nodeName()).isEqualTo("w9");
                assertThat(r.tokenId()).as("bound to the replacement's token").isEqualTo(ApiTokens.idOf(Files.readString(newToken))
                        .orElseThrow());
            });
            assertThat(nodeServing(lost.workerId())).isEqualTo("w9");

            // the lost host was not dead after all: under its old name it is a stranger now
            try (WorkerConnector back = registered("w1", oldToken, null)) {
                WorkerRecord fenced = back.status().assignment();
                assertThat(fenced.workerId()).isNotEqualTo(lost.workerId());
                assertThat(fenced.epoch()).as("new, so it drops its index").isEqualTo(1);
                assertThat(fenced.range().overlaps(lost.range())).isFalse();
                assertThat(nodeServing(lost.workerId())).as("the replaced id is served by the replacement only").isEqualTo("w9");
                assertThat(nodeServing(fenced.workerId())).isEqualTo("w1");
            }
        }
        master.close();
        open(); // a master restart keeps both
        assertThat(master.store.workers()).extracting(WorkerRecord::nodeName).containsExactlyInAnyOrder("w9", "w1");
        try (WorkerConnector again = registered("w9", newToken, null)) {
            assertThat(again.status().assignment().workerId()).isEqualTo(lost.workerId());
            assertThat(again.status().assignment().epoch()).isEqualTo(lost.epoch() + 2);
        }
    }

    @Test
    void replace_hostReusedWithTheIndexOfAnotherWorkerId_startsThatIndexOverBeforeServing() throws Exception {
        Path token = issue("host-a");
        byte[] f = new byte[N * 32];
        new Random(18).nextBytes(f);
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(master.server.dedupLinks(), master.registry, ClusterMode.NEAREST,
                SETTINGS);
        WorkerConnector dead = registered("dead", issue("host-dead"), null);
        long deadId = dead.status().assignment().workerId();
        stopAndLose(dead, null);

        // host H serves as worker w1 and learns N blocks
        Path index = dir.resolve("host-h").resolve("dedup-worker");
        LazyDedupWorker e1 = engine(index);
        WorkerConnector h = registered("w1", token, e1);
        long[] pbns = learn(remote, f, 9000);
        stopAndLose(h, e1);

        // control: back as w1 (epoch 2) it answers from its kept index, so the check below could fail
        LazyDedupWorker e2 = engine(index);
        h = registered("w1", token, e2);
        assertThat(lookup(remote, f)).containsExactly(pbns);
        remote.flush();
        stopAndLose(h, e2);

        // an admin hands the dead worker's id to H under a new name: H registers as that id at a later epoch
        master.registry.replace(deadId, "w9");
        LazyDedupWorker e3 = engine(index);
        try (WorkerConnector taken = registered("w9", token, e3)) {
            assertThat(taken.status().assignment().workerId()).isEqualTo(deadId);
            assertThat(taken.status().assignment().epoch()).isEqualTo(2);
            assertThat(lookup(remote, f)).as("an index built for worker w1 must not answer as the dead worker").containsOnly(0L);
        } finally {
            e3.close();
        }
    }

    /** Stores the N blocks {@code f} as new at PBNs from {@code firstPbn} on, through the master's index, and flushes the workers. */
    private static long[] learn(RemoteFingerprintIndex remote, byte[] f, long firstPbn) {
        long[] pbns = new long[N];
        try (DedupStream s = remote.openStream("v")) {
            s.lookup(f, N, pbns);
            boolean[] isNew = new boolean[N];
            for (int i = 0; i < N; i++) {
                pbns[i] = firstPbn + i;
                isNew[i] = true;
            }
            s.record(f, N, pbns, isNew);
        }
        remote.flush();
        return pbns;
    }

    private static long[] lookup(RemoteFingerprintIndex remote, byte[] f) {
        long[] pbns = new long[N];
        try (DedupStream s = remote.openStream("v")) {
            s.lookup(f, N, pbns);
        }
        return pbns;
    }

    /**
     * GC after a replacement: until the new node is connected the replaced worker is a registered
     * worker that is away, so a sweep's forgets reach nobody (not even the workers up) and the sweep
     * frees nothing; once the new node serves the id, they reach it and every other worker.
     */
    @Test
    void replace_gcFreesNothingUntilTheNewNodeIsConnected_thenItsForgetsReachIt() throws Exception {
        byte[] f = new byte[N * 32];
        new Random(7).nextBytes(f);
        long[] pbns = new long[N];
        for (int i = 0; i < N; i++) {
            pbns[i] = 5000 + i;
        }
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(master.server.dedupLinks(), master.registry, ClusterMode.NEAREST,
                SETTINGS);
        LazyDedupWorker lostEngine = engine(dir.resolve("host-a").resolve("dedup-worker"));
        WorkerConnector lost = registered("w1", issue("host-a"), lostEngine);
        long lostId = lost.status().assignment().workerId();
        LazyDedupWorker otherEngine = engine(dir.resolve("host-o").resolve("dedup-worker"));
        LazyDedupWorker newEngine = engine(dir.resolve("host-b").resolve("dedup-worker"));
        Path newToken = issue("host-b");
        try (WorkerConnector other = registered("w2", issue("host-o"), otherEngine)) {
            stopAndLose(lost, lostEngine);
            master.registry.replace(lostId, "w9", ApiTokens.idOf(Files.readString(newToken)).orElseThrow());

            assertThatThrownBy(() -> remote.forgetAll(pbns, f, N)).as("a sweep while the replacement is away")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("w9 (id " + lostId + ") is not connected");
            assertThat(otherEngine.forgotten()).as("the check comes before any send").isZero();

            try (WorkerConnector replacement = registered("w9", newToken, newEngine)) {
                assertThat(replacement.status().assignment().workerId()).isEqualTo(lostId);
                remote.forgetAll(pbns, f, N);
                assertThat(newEngine.forgotten()).as("the replacement heard the forgets").isEqualTo(N);
                assertThat(otherEngine.forgotten()).isEqualTo(N);
            }
        } finally {
            otherEngine.close();
            newEngine.close();
        }
    }

    /**
     * A host that served a worker id, was replaced, and is handed the same id back later (the old
     * host repaired, the replacement lost in turn) missed every forget sent while the other node held
     * the id: the owner file names the right id, but its index is stale and must start over.
     */
    @Test
    void replace_idHandedBackToTheHostThatHeldItBefore_itsIndexMissedForgetsAndStartsOver() throws Exception {
        byte[] f = new byte[N * 32];
        new Random(31).nextBytes(f);
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(master.server.dedupLinks(), master.registry, ClusterMode.NEAREST,
                SETTINGS);
        Path tokenA = issue("host-a");
        Path tokenB = issue("host-b");
        Path indexA = dir.resolve("host-a").resolve("dedup-worker");

        // host A serves as w1 and learns N blocks
        LazyDedupWorker a1 = engine(indexA);
        WorkerConnector a = registered("w1", tokenA, a1);
        long id = a.status().assignment().workerId();
        long[] pbns = learn(remote, f, 7000);
        stopAndLose(a, a1);

        // host B takes the id over; GC frees those blocks: B hears the forgets, A (away, no longer the id's node) does not
        master.registry.replace(id, "w9");
        LazyDedupWorker b1 = engine(dir.resolve("host-b").resolve("dedup-worker"));
        WorkerConnector b = registered("w9", tokenB, b1);
        remote.forgetAll(pbns, f, N);
        stopAndLose(b, b1);

        // B's host dies in turn; A, repaired, is handed the id back under its old name
        master.registry.replace(id, "w1");
        LazyDedupWorker a2 = engine(indexA);
        try (WorkerConnector back = registered("w1", tokenA, a2)) {
            assertThat(back.status().assignment().workerId()).isEqualTo(id);
            assertThat(lookup(remote, f)).as("freed PBNs from an index that missed their forgets").containsOnly(0L);
        } finally {
            a2.close();
        }
    }
}
