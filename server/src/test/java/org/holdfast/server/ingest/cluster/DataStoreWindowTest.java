package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.ingest.IngestSettings;
import org.holdfast.server.ingest.SessionSpill;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several DATA_STOREs of one session in flight (data on workers, {@link WorkerBlockHome#MAX_STORES_IN_FLIGHT}),
 * against two real workers over TLS with RocksDB and data logs on disk, trying to lose data: a worker
 * that dies with stores in flight, and a worker that refuses the third of five stores in flight, fail
 * the backup with nothing committed; the previous snapshot still restores bit for bit and the next
 * backup succeeds. The session's home holds each store's answer back until the fifth store was sent
 * (a gate), so all five are in flight from the session's side whatever the machine's speed; the
 * workers store, refuse or die for real.
 */
class DataStoreWindowTest {
    private static final int BS = 4096;
    private static final int FRAME_BLOCKS = 8;

    @TempDir
    Path dir;
    private TlsWorkerNodes nodes;
    private IngestHarness master;
    // what the next session's home does to its stores (null: nothing)
    private volatile Disturbance disturbance;

    /** What a test does to the stores of one session: sees each one started, and may change the fingerprints sent. */
    private interface Disturbance {
        /** Store {@code n} (1-based) to worker {@code worker} is about to start; may change {@code fps}. */
        void before(int n, long worker, byte[] fps, int fpOff);

        /** Store {@code n} started. */
        void after(int n, long worker);
    }

    @BeforeEach
    void start() throws IOException {
        Files.createDirectories(dir.resolve("spill"));
        SungemSettings settings = SungemFingerprintIndexTest.smallSettings();
        nodes = new TlsWorkerNodes(dir.resolve("cluster"), 2, settings, Clock.systemUTC(), true);
        // checkpoints every 1,024 entries or so, so that a backup of a few thousand blocks meets them with stores in flight
        master = IngestHarness.withBlocks(dir.resolve("master"), IngestSettings.loopback().withSpill(new SessionSpill(dir.resolve("spill"), 1024)),
                (db, d) -> new RemoteFingerprintIndex(nodes.server().dedupLinks(), nodes.registry(), ClusterMode.NEAREST, settings),
                () -> new DelegatingBlockHome(new WorkerBlockHome(nodes.server().rangeStores())) {
                    @Override
                    public BlockHome forSession() {
                        Disturbance d = disturbance;
                        return d == null ? home().forSession() : new Gated(home().forSession(), d);
                    }
                });
    }

    @AfterEach
    void stop() {
        if (master != null) {
            master.close();
        }
        if (nodes != null) {
            nodes.close();
        }
    }

    /**
     * A session's home whose stores' answers reach the session only once the fifth store was sent (or
     * a later one): five stores in flight at once from the session's side.
     */
    private static final class Gated extends DelegatingBlockHome {
        private final Disturbance disturbance;
        private final CompletableFuture<Void> gate = new CompletableFuture<>();
        private final AtomicInteger started = new AtomicInteger();

        Gated(BlockHome home, Disturbance disturbance) {
            super(home);
            this.disturbance = disturbance;
        }

        @Override
        public CompletableFuture<Long> startAppendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength,
                                                        int blockSize) {
            int n = started.incrementAndGet();
            disturbance.before(n, worker, fps, fpOff);
            CompletableFuture<Long> sent = home().startAppendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize);
            disturbance.after(n, worker);
            if (n >= 5) {
                gate.complete(null);
            }
            return gate.thenCompose(x -> sent);
        }
    }

    /** Compressible blocks, every one different (so every block is new and goes out in frames). */
    private static byte[] image(long seed, int blocks) {
        byte[] img = new byte[blocks * BS];
        Random r = new Random(seed);
        for (int i = 0; i < img.length; i += 64) {
            img[i] = (byte) r.nextInt();
            img[i + 1] = (byte) r.nextInt();
        }
        return img;
    }

    private int nodeOf(long workerId) {
        for (int node = 0; node < 2; node++) {
            int k = node;
            if (nodes.registry().workers().stream().anyMatch(v -> v.nodeName().equals("w" + k) && v.workerId() == workerId)) {
                return node;
            }
        }
        throw new AssertionError("no node has worker id " + workerId);
    }

    private long latest(String volume) {
        return master.catalog().volume(new VolumeId(volume)).map(VolumeRecord::latestSequence).orElse(0L);
    }

    private long workerBlocks() {
        long n = 0;
        for (WorkerRangeData d : nodes.rangeData()) {
            DataStore s = d.store();
            n += s == null ? 0 : s.stats().appendedBlocks();
        }
        return n;
    }

    private void assertRestores(String volume, long seq, byte[] expected) {
        await().atMost(Duration.ofSeconds(30)).until(() -> nodes.server().rangeStores().upAt(1) != null);
        try (AgentDriver a = new AgentDriver(master.port())) {
            a.hello();
            assertThat(a.restore(volume, seq).image()).as("%s@%d restores bit for bit from the workers", volume, seq).isEqualTo(expected);
        }
    }

    /** Backs up volume "v" as its snapshot 1 (frames of a 400-block image made from {@code seed}) and returns the image. */
    private byte[] firstSnapshot(long seed) {
        byte[] first = image(seed, 400);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            assertThat(agent.backupFrames("v", first, BS, FRAME_BLOCKS).sequence()).isEqualTo(1);
        }
        return first;
    }

    /** Backs {@code img} up as frames and expects the session to fail as a worker that is unavailable. */
    private ErrorMessage failingBackup(String volume, byte[] img) {
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            agent.begin(volume, BS, img.length, 0);
            agent.sendFrames(img, BS, FRAME_BLOCKS);
            agent.send(new Commit(img.length));
            return agent.expectErrorAndStop();
        }
    }

    @Test
    void backup_workerDiesWithFiveStoresInFlight_failsNothingCommittedAndThePreviousSnapshotRestoresBitForBit() {
        byte[] first = firstSnapshot(1);
        int[] killed = {-1};
        disturbance = new Disturbance() {
            @Override
            public void before(int n, long worker, byte[] fps, int fpOff) {
            }

            @Override
            public void after(int n, long worker) {
                if (n == 5) {
                    // the fifth DATA_STORE just left: the worker it went to dies with it (and maybe the ones before) unanswered
                    killed[0] = nodeOf(worker);
                    nodes.connector(killed[0]).close();
                }
            }
        };
        byte[] second = image(2, 400);
        ErrorMessage e = failingBackup("v", second);
        disturbance = null;
        assertThat(killed[0]).as("the session had five stores in flight").isNotNegative();
        assertThat(e.code()).isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
        assertThat(e.message()).as("says the worker is lost and to run the backup again").contains("lost").contains("again");
        assertThat(latest("v")).as("no snapshot commits with blocks its worker did not acknowledge as stored").isEqualTo(1);

        nodes.reconnect(killed[0]);
        assertRestores("v", 1, first);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            assertThat(agent.backupFrames("v", second, BS, FRAME_BLOCKS).sequence()).isEqualTo(2);
        }
        assertRestores("v", 2, second);
        assertRestores("v", 1, first);
    }

    @Test
    void backupSingleBlocks_checkpointsWhileStoresInFlight_everyBlockLandsAndRestoresBitForBit() {
        // each ENTRIES run is answered and uploaded before the next: the next run's checkpoint meets the last run's stores in flight
        byte[] img = new byte[3000 * BS];
        new Random(7).nextBytes(img);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            agent.begin("s", BS, img.length, 0);
            for (int from = 0; from < 3000; from += 500) {
                agent.sendEntriesAndBlocks(img, BS, from, from + 500, false, null);
            }
            agent.send(new Commit(img.length));
            assertThat(agent.expect(Committed.class).newBlocks()).isEqualTo(3000);
        }
        assertThat(workerBlocks()).as("every block on a worker, once").isEqualTo(3000);
        assertRestores("s", 1, img);
    }

    @Test
    void backup_workerRefusesTheThirdOfFiveStoresInFlight_sessionFailsCleanlyNothingCommitted() {
        byte[] first = firstSnapshot(3);
        long before = workerBlocks();
        disturbance = new Disturbance() {
            @Override
            public void before(int n, long worker, byte[] fps, int fpOff) {
                if (n == 3) {
                    fps[fpOff] ^= 1; // the worker's own check refuses it: DATA_FAILED, nothing of that frame stored
                }
            }

            @Override
            public void after(int n, long worker) {
            }
        };
        byte[] second = image(4, 400);
        ErrorMessage e = failingBackup("v", second);
        disturbance = null;
        assertThat(e.code()).isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
        assertThat(e.message()).as("the worker's refusal, and what to do").contains("refused").contains("again");
        assertThat(latest("v")).as("nothing of the failed session is committed").isEqualTo(1);
        // stores 4 and 5 were in flight behind the refused one: the worker stored them, the session never resolved them
        assertThat(workerBlocks() - before).as("stores 1, 2, 4, 5 reached the workers, store 3 did not")
                .isGreaterThanOrEqualTo(4L * FRAME_BLOCKS);

        assertRestores("v", 1, first);
        try (AgentDriver agent = new AgentDriver(master.port())) {
            agent.hello();
            assertThat(agent.backupFrames("v", second, BS, FRAME_BLOCKS).sequence()).isEqualTo(2);
        }
        assertRestores("v", 2, second);
    }
}
