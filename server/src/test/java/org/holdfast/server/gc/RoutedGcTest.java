package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.ingest.cluster.GcRoutingCluster;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master's GC with its operations routed to two workers (distributed GC, thesis 7.2.4): real
 * RocksDB catalog, data store and GC files on the master, real sockets and real GMA and BOSC files
 * on the workers. The same commits, holds, policy raises and a volume deletion are run on a
 * standalone GC service as the reference: each worker's GMA must end with exactly the reference's
 * slots of its PBNs, and the master's GMA with those of its own range, whatever happens between
 * (a worker down, a master crash between the outbox and its own log), and the outbox drains to 0.
 * Each worker's routed mark moves only with its own shares, and an export after a clean close
 * carries it (worker-fsck then compares a worker the master's last operations routed nothing to).
 */
class RoutedGcTest {
    /** Worker ranges low enough that the standalone reference GMA stays small. */
    private static final long FIRST = 1_000_000;
    private static final long SIZE = 100_000;
    private static final PbnRange OWN = new PbnRange(1, FIRST);
    private static final int BS = 4096;
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-06-01T00:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path dir;
    private Stack master;
    private Stack reference;
    private GcRoutingCluster cluster;

    /** A master's storage stack and its GC service (routed or standalone), which a test may crash and reopen. */
    private static final class Stack implements AutoCloseable {
        final Path dir;
        final MetadataDb db;
        final DataStore store;
        final FingerprintIndex index;
        final Catalog catalog;
        GcRouting routing;
        GcService gc;
        SnapshotCommit commit;

        Stack(Path dir) {
            this.dir = dir;
            db = MetadataDb.open(dir.resolve("catalog"));
            store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 64, 0), db);
            index = new ExactFingerprintIndex(db);
            catalog = new Catalog(db);
        }

        void openGc(GcRouting routing) {
            this.routing = routing;
            Object[] monitor = new Object[1];
            gc = GcService.open(new GcService.Settings(dir.resolve("gc"), BoscSettings.defaults().withCommitIdle(Duration.ofMillis(1)),
                    Duration.ofHours(2), "12h", 8), catalog, store, index, CLOCK, () -> monitor[0], routing);
            commit = new SnapshotCommit(catalog, new GcCommitHook(gc), CLOCK);
            monitor[0] = commit;
        }

        /** As a crash leaves the GC: its log buffer neither flushed nor checkpointed; then opened again from the same directories. */
        void crashAndReopenGc() {
            gc.abandon();
            openGc(routing);
        }

        @Override
        public void close() {
            if (gc != null) {
                gc.close();
            }
            index.close();
            store.close();
            db.close();
        }
    }

    /** One step of the scenario, run the same way on the routed master and on the reference. */
    private interface Step {
        void run(Stack s);
    }

    @BeforeEach
    void open() {
        master = new Stack(dir.resolve("master"));
        cluster = new GcRoutingCluster(dir.resolve("cluster"), master.db, 2, FIRST, SIZE);
        assertThat(cluster.range(0)).isEqualTo(new PbnRange(FIRST, FIRST + SIZE));
        assertThat(cluster.range(1)).isEqualTo(new PbnRange(FIRST + SIZE, FIRST + 2 * SIZE));
        master.openGc(cluster.senders());
        cluster.senders().start();
        reference = new Stack(dir.resolve("reference"));
        reference.openGc(null);
    }

    @AfterEach
    void close() {
        for (AutoCloseable c : new AutoCloseable[] {cluster, master, reference}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        }
    }

    /** Commits, holds and their release, a policy that raises expiries, and a volume deletion over PBNs of all three ranges. */
    private static List<Step> scenario(long seed) {
        Random random = new Random(seed);
        List<Step> steps = new ArrayList<>();
        VolumeId[] volumes = {new VolumeId("a"), new VolumeId("b")};
        long[] latest = new long[volumes.length];
        for (int k = 0; k < 40; k++) {
            int v = random.nextInt(volumes.length);
            VolumeId vol = volumes[v];
            long parent = latest[v];
            long heldSeq = latest[0]; // holds on volume a only: b is deleted at the end
            if (k % 9 == 4 && heldSeq > 0) {
                steps.add(s -> s.gc.placeHold(volumes[0], heldSeq));
                continue;
            }
            if (k % 9 == 7 && heldSeq > 0) {
                steps.add(s -> s.gc.placeHold(volumes[0], heldSeq));
                steps.add(s -> s.gc.releaseHold(volumes[0], heldSeq));
                continue;
            }
            int n = 1 + random.nextInt(30);
            long[] lbnPbn = new long[2 * n];
            for (int i = 0; i < n; i++) {
                lbnPbn[2 * i] = i * 3L + random.nextInt(3);
                lbnPbn[2 * i + 1] = random.nextInt(10) == 0 ? 0 : pbn(random);
            }
            steps.add(s -> commit(s, vol, parent, lbnPbn));
            latest[v]++;
        }
        steps.add(s -> s.gc.setPolicy(volumes[0], "30d")); // extends every snapshot of a: one raise per snapshot
        steps.add(s -> s.gc.deleteVolume(volumes[1], VolumeGate.NONE)); // one release of its newest state
        return steps;
    }

    /** A PBN of the master's, w1's or w2's range (a few of each, so counts add up). */
    private static long pbn(Random random) {
        int owner = random.nextInt(3);
        long base = owner == 0 ? 1 : owner == 1 ? FIRST : FIRST + SIZE;
        return base + random.nextInt(40);
    }

    private static void commit(Stack s, VolumeId vol, long parent, long[] lbnPbn) {
        SessionMap m = new SessionMap(4);
        for (int i = 0; i < lbnPbn.length; i += 2) {
            m.add(lbnPbn[i], lbnPbn[i + 1]);
        }
        long blocks = 100;
        s.commit.commit(new SnapshotCommit.Request(vol, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0));
    }

    private void runOnBoth(List<Step> steps) {
        for (Step step : steps) {
            step.run(master);
            step.run(reference);
        }
    }

    /** Every USED slot of {@code p} as "rc/pins/flags/expiry", by PBN. */
    private static TreeMap<Long, String> dump(BoscPipeline p) {
        p.commitAll();
        TreeMap<Long, String> out = new TreeMap<>();
        p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> out.put(pbn, rc + "/" + pins + "/" + flags + "/" + expiry));
        return out;
    }

    private TreeMap<Long, String> expected(PbnRange r) {
        return new TreeMap<>(dump(reference.gc.pipeline()).subMap(r.first(), r.limit()));
    }

    private void awaitDrained() {
        for (int w = 0; w < 2; w++) {
            long id = cluster.workerId(w);
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.senders().pending(id) == 0);
        }
    }

    /** Each worker's GMA and the master's own hold exactly the reference's slots of their PBNs; nothing is left to send. */
    private void assertStandaloneCounts() {
        awaitDrained();
        for (int w = 0; w < 2; w++) {
            assertThat(dump(cluster.workerGc(w))).as("GMA of worker " + (w + 1) + " " + cluster.range(w)).isNotEmpty()
                    .isEqualTo(expected(cluster.range(w)));
        }
        assertThat(dump(master.gc.pipeline())).as("the master's own GMA").isNotEmpty().isEqualTo(expected(OWN));
        assertThat(new GcOutbox(master.db).workers()).as("the outbox is empty").isEmpty();
        assertThat(master.gc.failure()).isNull();
    }

    @Test
    void routedOperations_twoWorkers_eachGmaHoldsTheStandaloneCountsAndTheOutboxDrains() {
        runOnBoth(scenario(7));
        long mark = master.gc.lastAppliedOp();
        runOnBoth(List.of(s -> commit(s, new VolumeId("only-w1"), 0, new long[] {0, FIRST + 1, 1, FIRST + 2})));
        assertStandaloneCounts();
        assertThat(master.gc.lastAppliedOp()).as("one group per operation in the master's log, an empty one too")
                .isEqualTo(mark + 1).isEqualTo(reference.gc.lastAppliedOp()).isGreaterThan(40);
    }

    @Test
    void workerDown_duringOperations_backlogKeptAndDeliveredAfterItReconnects() {
        List<Step> steps = scenario(11);
        long w1 = cluster.workerId(0);
        cluster.stopWorker(0);
        long logged = cluster.workerGc(0).lastOpId();
        runOnBoth(steps);
        long backlog = cluster.senders().pending(w1);
        assertThat(backlog).as("w1's shares wait in the outbox").isPositive();
        await().pollDelay(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> true);
        assertThat(cluster.senders().pending(w1)).as("kept while w1 is down").isEqualTo(backlog);
        assertThat(cluster.workerGc(0).lastOpId()).as("w1 got nothing while down").isEqualTo(logged);
        cluster.startWorker(0);
        assertStandaloneCounts();
    }

    @Test
    void masterCrash_betweenOutboxAndItsOwnLog_redriveAtOpenCountsEverythingOnce() {
        List<Step> steps = scenario(13);
        int half = steps.size() / 2;
        runOnBoth(steps.subList(0, half));
        awaitDrained();
        // the next commit reaches the outbox (synced), then the master "crashes" before its own group
        AtomicBoolean crashed = new AtomicBoolean();
        ((RoutedBookkeeping) master.gc.bookkeeping()).afterOutbox(() -> {
            if (crashed.compareAndSet(false, true)) {
                throw new IllegalStateException("crash between the outbox and the master's GC log");
            }
        });
        long before = master.gc.lastAppliedOp();
        VolumeId vol = new VolumeId("crash");
        long[] lbnPbn = {0, 3, 1, FIRST + 3, 2, FIRST + SIZE + 3, 3, FIRST + 7};
        commit(master, vol, 0, lbnPbn);
        commit(reference, vol, 0, lbnPbn);
        assertThat(crashed).isTrue();
        assertThat(master.gc.lastAppliedOp()).as("the crashed operation is not in the master's log").isEqualTo(before);
        long crashedOp = before + 1;
        long w1 = cluster.workerId(0);
        assertThat(cluster.senders().pending(w1) > 0 || cluster.workerGc(0).lastOpId() >= GcDelta.deltaId(crashedOp, 0))
                .as("w1's share of operation " + crashedOp + " was in the outbox before the crash").isTrue();
        master.crashAndReopenGc(); // the re-drive writes the same outbox keys again and logs the master's group
        assertThat(master.gc.lastAppliedOp()).as("re-driven at open").isEqualTo(crashedOp);
        runOnBoth(steps.subList(half, steps.size()));
        assertStandaloneCounts();
    }

    @Test
    void runCycle_bookkeepingFailsDuringRetention_noWorkerAskedToSweep() {
        VolumeId vol = new VolumeId("aging");
        commit(master, vol, 0, new long[] {0, FIRST + 1, 1, FIRST + SIZE + 1});
        commit(master, vol, 1, new long[] {0, FIRST + 2, 1, FIRST + SIZE + 2});
        master.gc.setPolicy(vol, "keep-last=2"); // the cycle pins the older one once it expired: an operation routed to the workers
        awaitDrained();
        List<Long> asked = new ArrayList<>();
        master.gc.sweepOwnersWith(now -> {
            asked.add(now);
            return List.of();
        });
        // every operation the cycle's retention routes fails between the outbox and the master's log: GC pauses
        ((RoutedBookkeeping) master.gc.bookkeeping()).afterOutbox(() -> {
            throw new IllegalStateException("the master's GC log failed");
        });
        master.gc.runCycle(CLOCK.millis() + Duration.ofDays(60).toMillis());
        assertThat(master.gc.failure()).as("the retention's operations were not logged").isNotNull();
        assertThat(asked).as("no worker is asked to sweep while operations wait in the catalog, not the outbox").isEmpty();
    }

    @Test
    void runCycle_healthy_workersAskedToSweep() {
        commit(master, new VolumeId("fresh"), 0, new long[] {0, FIRST + 1});
        List<Long> asked = new ArrayList<>();
        master.gc.sweepOwnersWith(now -> {
            asked.add(now);
            return List.of();
        });
        master.gc.runCycle(CLOCK.millis());
        assertThat(asked).containsExactly(CLOCK.millis());
    }

    @Test
    void pbnInNoRange_refused_nothingWrittenToTheOutboxOrAnyLog() {
        runOnBoth(scenario(17).subList(0, 5));
        awaitDrained();
        long masterMark = master.gc.lastAppliedOp();
        long w1 = cluster.workerGc(0).lastOpId();
        long w2 = cluster.workerGc(1).lastOpId();
        commit(master, new VolumeId("stray"), 0, new long[] {0, FIRST + 1, 1, FIRST + 5 * SIZE}); // the second PBN lies in no range
        assertThat(master.gc.failure()).as("GC paused with the routing's refusal").isNotNull()
                .hasMessageContaining("lies in no known PBN range");
        assertThat(new GcOutbox(master.db).workers()).as("no outbox entry, not even w1's share").isEmpty();
        assertThat(master.gc.lastAppliedOp()).as("no group in the master's log").isEqualTo(masterMark);
        await().pollDelay(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> true);
        assertThat(cluster.workerGc(0).lastOpId()).isEqualTo(w1);
        assertThat(cluster.workerGc(1).lastOpId()).isEqualTo(w2);
    }

    @Test
    void routedMark_operationsRoutedToOneWorker_onlyItsMarkMovesExportKnowsItAfterACleanClose() {
        for (Step step : scenario(19).subList(0, 12)) {
            step.run(master);
        }
        awaitDrained();
        GcOutbox outbox = new GcOutbox(master.db);
        long w1 = cluster.workerId(0);
        long w2 = cluster.workerId(1);
        for (int w = 0; w < 2; w++) {
            assertThat(outbox.routedMark(cluster.workerId(w))).as("worker " + (w + 1) + " logged every delta routed to it")
                    .hasValue(cluster.workerGc(w).lastOpId());
        }
        long w2Mark = outbox.routedMark(w2).getAsLong();
        commit(master, new VolumeId("only-w1"), 0, new long[] {0, FIRST + 1, 1, 5});
        long op = master.gc.lastAppliedOp();
        assertThat(outbox.routedMark(w1)).as("in the same batch as the entry").hasValue(GcDelta.deltaId(op, 0));
        assertThat(outbox.routedMark(w2)).as("nothing routed to w2").hasValue(w2Mark);
        awaitDrained();
        try (MetadataBatch b = new MetadataBatch()) {
            master.db.putMetaLong(b, FormatVersions.META_CLUSTER_DATA_MODE, FormatVersions.CLUSTER_DATA_ON_WORKERS);
            master.db.write(b, true);
        }
        assertThat(WorkerGcExport.routedOf(master.catalog, w2).unknownWhy()).as("the GC has not closed since these operations")
                .contains("did not last stop with every operation routed");

        master.gc.close(); // a clean stop records that every operation is routed
        master.gc = null;
        WorkerCountsFile.Header h = exportTo(w2, dir.resolve("w2.counts"));

        assertThat(h.routedMark()).isEqualTo(w2Mark);
        assertThat(h.outboxEntries()).isZero();
        assertThat(h.mark()).isEqualTo(GcDelta.deltaId(op, GcDelta.MAX_PART));
        assertThat(WorkerFsckReport.Marks.of(cluster.workerGc(1).lastOpId(), h.mark(), h.routedMark()))
                .as("w2 logged every delta routed to it; operation " + op + " routed it nothing")
                .isEqualTo(WorkerFsckReport.Marks.ALL_ROUTED_APPLIED);
        assertThat(WorkerFsckReport.Marks.of(cluster.workerGc(1).lastOpId(), h.mark(), WorkerCountsFile.UNKNOWN))
                .as("the equal-marks rule alone").isEqualTo(WorkerFsckReport.Marks.WORKER_BEHIND);
        // a catalog from before routed marks (upgrade): no key means unknown, never 0, until a delta is routed to the worker
        try (MetadataBatch b = new MetadataBatch()) {
            master.db.delete(b, MetadataDb.Column.GC_OUTBOX, GcOutbox.routedKey(w2));
            master.db.write(b, true);
        }
        WorkerGcExport.Routed upgraded = WorkerGcExport.routedOf(master.catalog, w2);
        assertThat(upgraded.mark()).isEqualTo(WorkerCountsFile.UNKNOWN);
        assertThat(upgraded.unknownWhy()).contains("records no delta routed to this worker");
        master.openGc(cluster.senders());
        commit(master, new VolumeId("after"), 0, new long[] {0, FIRST + SIZE + 1});
        assertThat(outbox.routedMark(w2)).as("the first routing after the upgrade writes it")
                .hasValue(GcDelta.deltaId(master.gc.lastAppliedOp(), 0));
        assertThat(WorkerGcExport.routedOf(master.catalog, w2).mark()).as("an operation since the clean close: unknown")
                .isEqualTo(WorkerCountsFile.UNKNOWN);
    }

    @Test
    void routedMark_unreadableValueInTheCatalog_overwrittenAndGcKeepsRunning() {
        long w1 = cluster.workerId(0);
        master.db.put(master.db.handle(MetadataDb.Column.GC_OUTBOX), GcOutbox.routedKey(w1), new byte[] {9, 9});

        commit(master, new VolumeId("heal"), 0, new long[] {0, FIRST + 1});

        assertThat(master.gc.failure()).isNull();
        assertThat(new GcOutbox(master.db).routedMark(w1)).hasValue(GcDelta.deltaId(master.gc.lastAppliedOp(), 0));
        awaitDrained();
        assertThat(cluster.workerGc(0).lastOpId()).isEqualTo(GcDelta.deltaId(master.gc.lastAppliedOp(), 0));
    }

    private WorkerCountsFile.Header exportTo(long workerId, Path file) {
        WorkerGcExport.Report r = new WorkerGcExport(master.catalog, 1, CLOCK, line -> { }).run(workerId, file);
        assertThat(r.routed().unknownWhy()).isNull();
        return WorkerCountsFile.verify(file);
    }
}
