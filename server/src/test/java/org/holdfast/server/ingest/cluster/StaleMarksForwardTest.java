package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;
import static org.holdfast.server.ingest.cluster.RangeBlocks.blocks;
import static org.holdfast.server.ingest.cluster.RangeBlocks.fps;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SegmentRecord;
import org.holdfast.server.engine.SteppingClock;
import org.holdfast.server.engine.SungemStats;
import org.holdfast.server.store.PossessionIndex;
import org.holdfast.server.store.PossessionTestAccess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stale marks through the master (cluster version 8, thesis 7.2.4), over real links in this JVM: a
 * master's cluster port, worker "a" with a range store, GMA, BOSC log and Sungem engine, and worker
 * "b" with an engine only, whose containers hold blocks of a's range (as nearest mode records a
 * segment where it matched). a's sweep frees blocks; the master forwards their marks to b, whose
 * engine then no longer answers them; without forwarding b still does (the missed forward this
 * closes). Blocks b's engine never recorded (data on workers' normal case) cost b nothing: its gate
 * skips them. A forged part (a PBN outside a's range) is refused and changes nothing on b. A part whose
 * receiving worker is down is taken and owed to it on the master ({@link OwedForgets}), also across a
 * master restart, and delivered before b's next link serves a lookup; more owed than kept distrusts b (its
 * answers in another worker's range are misses); a master without {@link OwedForgets} leaves the part on a.
 */
class StaleMarksForwardTest {
    private static final long FIRST = OneRangeWorker.FIRST;
    private static final long DAY = 86_400_000L;
    private static final int N = 12;
    /** The first ones lose their reference with an expiry a day ago: a's sweep frees them. */
    private static final int FREED = 8;

    @TempDir
    Path dir;
    private TestMaster master;
    private Path tokenFile;
    private WorkerRangeData data;
    private WorkerGcMetadata gc;
    private LazyDedupWorker dedupA;
    private LazyDedupWorker dedupB;
    private WorkerConnector a;
    private WorkerConnector b;
    private final SteppingClock clock = new SteppingClock(Instant.now()); // moved past a grace by hand
    private OwedForgets owed;
    private int maxOwedParts = OwedForgets.MAX_PARTS;

    @BeforeEach
    void start() throws Exception {
        master = RangeGcParts.master(dir, Duration.ofMillis(200));
        forwardWithOwed();
        tokenFile = RangeGcParts.tokenFile(dir, master);
        Path node = dir.resolve("a");
        data = RangeGcParts.rangeData(dir, node);
        gc = RangeGcParts.gcMetadata(node, Duration.ofHours(1), clock);
        dedupA = RangeGcParts.engine(dir.resolve("a").resolve("dedup-worker"), clock);
        dedupB = RangeGcParts.engine(dir.resolve("b").resolve("dedup-worker"), clock);
        a = new WorkerConnector(master.linkSettings("a", tokenFile), new LoadProbe(dir), dedupA, data, gc);
        a.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> master.server.rangeSweeps().up(1) != null
                && master.server.dedupLinks().upByWorkerId().containsKey(1L));
        startB();
    }

    /** The master's forwarder as this release wires it: what a worker whose link is down is owed is kept in {@code owed/}. */
    private void forwardWithOwed() {
        owed = new OwedForgets(dir.resolve("owed"), maxOwedParts);
        master.server.forwardStaleMarks(new StaleMarkForwarder(master.server.dedupLinks(), master.registry, ClusterMode.NEAREST, owed));
    }

    private void startB() {
        b = new WorkerConnector(master.linkSettings("b", tokenFile), new LoadProbe(dir), dedupB);
        b.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> master.server.dedupLinks().upByWorkerId().containsKey(2L));
    }

    @AfterEach
    void stop() {
        for (WorkerConnector w : new WorkerConnector[] {a, b}) {
            if (w != null) {
                w.close();
            }
        }
        data.close();
        gc.close();
        dedupA.close();
        dedupB.close();
        master.close();
    }

    /** N blocks stored on a, recorded by both engines, referenced once, the first FREED dereferenced with an expiry a day ago. */
    private long[] storeOnAHeldByBoth(byte[] raw) {
        return storeOnAHeldByBoth(raw, true);
    }

    /** As above; recorded by b's engine too only if {@code alsoOnB}. */
    private long[] storeOnAHeldByBoth(byte[] raw, boolean alsoOnB) {
        RemoteRangeStore store = master.server.rangeStores().up(1);
        long[] pbns = alsoOnB ? RangeGcParts.storeAndRecord(store, raw, N, dedupA, dedupB) : RangeGcParts.storeAndRecord(store, raw, N, dedupA);
        // the backup that stored them protected them and committed; its grace on the worker has passed since
        LandedBackup.protectAndEnd(master.server, gc, 1, pbns);
        clock.advance(Duration.ofHours(2));
        GcDeltaScript.commitThenDelete(master.server.gcDeltas().up(1), pbns, FREED, k -> clock.millis() - DAY);
        return pbns;
    }

    private long stream = 10;

    private long[] lookUpOnB(byte[] raw) {
        return Arrays.copyOf(dedupB.lookup(new SegmentLookup(stream++, fps(raw), N)).join().pbns(), N);
    }

    /** b's answer {@code after} never names a freed PBN of {@code pbns} and still finds the kept ones. */
    private static void assertFreedMissedKeptFound(long[] after, long[] pbns) {
        for (int k = 0; k < N; k++) {
            if (k < FREED) {
                assertThat(after[k]).as("b never answers freed PBN of block " + k).isNotEqualTo(pbns[k]);
            } else {
                assertThat(after[k]).as("kept block " + k + " still a duplicate on b").isEqualTo(pbns[k]);
            }
        }
    }

    private GcSwept sweepA() {
        GcSwept r = master.server.rangeSweeps().up(1).sweep(GcSweep.NO_TIME, false).join();
        assertThat(r.blocksFreed()).isEqualTo(FREED);
        return r;
    }

    @Test
    void nearest_freedOnA_markedStaleOnB_thenStoredAgainAndReadBack() {
        byte[] raw = blocks(41, N, false);
        long[] pbns = storeOnAHeldByBoth(raw);
        assertThat(lookUpOnB(raw)).as("b's containers hold a's blocks").containsExactly(pbns);

        sweepA();
        StaleMarkOutbox outbox = a.rangeSweep().staleMarks();
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox.pending().isEmpty());
        assertThat(dedupB.forgotten()).as("b's engine took exactly a's freed blocks").isEqualTo(FREED);
        assertFreedMissedKeptFound(lookUpOnB(raw), pbns);

        // a later backup of the freed content stores it again, and it reads back byte for byte
        RemoteRangeStore store = master.server.rangeStores().up(1);
        for (int k = 0; k < FREED; k++) {
            byte[] blk = Arrays.copyOfRange(raw, k * BS, (k + 1) * BS);
            long p = store.store(PayloadCodec.RAW, BS, 1, fps(blk), blk).join();
            assertThat(p).as("a new PBN, not the freed one").isGreaterThan(pbns[N - 1]);
            store.sync().join();
            assertThat(store.read(new long[] {p}).join().get(0)).isEqualTo(blk);
        }
    }

    @Test
    void nearest_freedOnA_notHeldByB_skippedByBsGate_noStaleLogRecordNoMark() throws Exception {
        byte[] raw = blocks(46, N, false);
        storeOnAHeldByBoth(raw, false); // as data=workers records it: only on a, which stores the blocks
        lookUpOnB(raw); // b's engine open, so its stale.log exists
        Path bStaleLog = dir.resolve("b").resolve("dedup-worker").resolve("sungem").resolve("stale.log");
        long logBefore = Files.size(bStaleLog);

        sweepA();
        await().atMost(Duration.ofSeconds(20)).until(() -> a.rangeSweep().staleMarks().pending().isEmpty());

        assertThat(dedupB.forgotten()).as("the master forwarded a's freed blocks to b").isEqualTo(FREED);
        assertThat(dedupB.forgetsSkipped()).as("b's gate: it cannot hold them").isEqualTo(FREED);
        SungemStats bStats = dedupB.sungemIfOpen().sungemStats();
        assertThat(bStats.staleMarks()).as("no mark in b's memory").isZero();
        assertThat(bStats.forgetsNotHeld()).isEqualTo(FREED);
        assertThat(Files.size(bStaleLog)).as("no stale.log record on b").isEqualTo(logBefore);
        assertThat(dedupA.forgetsSkipped()).as("a's own sweep forgets in full").isZero();
    }

    @Test
    void withoutForwarding_bStillAnswersTheFreedPbns() {
        master.server.forwardStaleMarks(null); // a master that forwards nothing: the case before cluster version 8
        byte[] raw = blocks(42, N, false);
        long[] pbns = storeOnAHeldByBoth(raw);
        sweepA();
        await().atMost(Duration.ofSeconds(20)).until(() -> a.rangeSweep().staleMarks().pending().isEmpty());
        assertThat(dedupB.forgotten()).isZero();
        assertThat(lookUpOnB(raw)).as("b answers a's freed PBNs as duplicates: only the owner's grace guard would refuse them")
                .containsExactly(pbns);
    }

    @Test
    void staleAnswerOfFreedPbns_mastersPossessionEntriesGone_ownersGuardRefusesThemAfterARestart() {
        master.server.forwardStaleMarks(null); // b keeps answering a's freed PBNs: the stale engine this guards against
        PossessionIndex possession = PossessionTestAccess.over(master.db);
        master.server.forgetRecordsOfFreed(possession::deleteAll); // as ClusterConfiguration wires it
        byte[] raw = blocks(47, N, false);
        long[] pbns = storeOnAHeldByBoth(raw);
        possession.putAll(pbns, new byte[N * 16], null, N); // as the backups that stored them recorded them
        org.holdfast.common.id.PbnRange aRange = master.server.gcGuards().owner(pbns[0]).range();

        sweepA();
        await().atMost(Duration.ofSeconds(20)).until(() -> a.rangeSweep().staleMarks().pending().isEmpty());
        long[] stale = lookUpOnB(raw);
        assertThat(stale).as("b still answers the freed PBNs").containsExactly(pbns);
        boolean[] found = new boolean[N];
        possession.pfs(stale, N, new byte[N * 16], found, new byte[8], new byte[PossessionIndex.WITH_KEY_BYTES]);
        for (int k = 0; k < N; k++) {
            assertThat(found[k]).as("master's possession entry of block " + k + " (freed: gone, so no proof resolves it)")
                    .isEqualTo(k >= FREED);
        }

        // a's worker restarts: no tombstone of the sweep is left, only the GMA's FREED marks
        a.close();
        a = null;
        gc.close();
        gc = RangeGcParts.gcMetadata(dir.resolve("a"), Duration.ofHours(1), clock);
        gc.claim(aRange);
        long[] asked = stale.clone();
        assertThat(gc.guard().protect(99, asked, 0, N, true)).as("the owner refuses every freed PBN b answered").isEqualTo(FREED);
        for (int k = 0; k < N; k++) {
            assertThat(asked[k]).as("block " + k + ": freed ones stored anew, kept ones protected").isEqualTo(k < FREED ? 0 : pbns[k]);
        }
    }

    @Test
    void forgedPart_pbnOutsideTheSendersRange_refused_bUnchanged() {
        byte[] raw = blocks(43, N, false);
        long[] bRange = new long[N];
        for (int k = 0; k < N; k++) {
            bRange[k] = FIRST + MembershipSettings.DEFAULT_RANGE_SIZE + 1 + k; // worker b's range, not a's
        }
        boolean[] isNew = new boolean[N];
        Arrays.fill(isNew, true);
        dedupB.record(new SegmentRecord(1, fps(raw), N, bRange, isNew, N)).join();
        dedupB.flush();
        StaleMarkOutbox outbox = a.rangeSweep().staleMarks();
        outbox.add(bRange, fps(raw), N); // as if a's sweep had freed them
        outbox.ready();
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox.pending().isEmpty()); // refused: dropped on a
        assertThat(dedupB.forgotten()).as("nothing forwarded").isZero();
        assertThat(lookUpOnB(raw)).as("b's index unchanged").containsExactly(bRange);
        assertThat(master.server.dedupLinks().upByWorkerId()).as("the link stays: a refusal, not a violation").containsKey(1L);
    }

    /** Stores blocks held by both engines, stops b and waits until the master sees its dedup link down. */
    private long[] storeThenStopB(byte[] raw) {
        long[] pbns = storeOnAHeldByBoth(raw);
        b.close();
        b = null;
        await().atMost(Duration.ofSeconds(20)).until(() -> !master.server.dedupLinks().upByWorkerId().containsKey(2L));
        return pbns;
    }

    /** b is down while a sweeps: the master takes the part (a's outbox empties) and owes it to b. */
    private long[] sweepWhileBIsDown(byte[] raw) {
        long[] pbns = storeThenStopB(raw);
        sweepA();
        await().atMost(Duration.ofSeconds(20)).until(() -> a.rangeSweep().staleMarks().pending().isEmpty());
        assertThat(owed.owed(2)).as("the part is owed to b, synced on the master").isEqualTo(1);
        assertThat(dedupB.forgotten()).as("b's engine is not reached while it is down").isZero();
        return pbns;
    }

    /** A lookup through the master's dedup link of b, as a backup's: the first call on b's new link. */
    private long[] lookUpOnBThroughMaster(byte[] raw) {
        RemoteDedupWorker w = master.server.dedupLinks().upByWorkerId().get(2L);
        return Arrays.copyOf(w.lookup(new SegmentLookup(stream++, fps(raw), N)).join().pbns(), N);
    }

    /** b registers again: its link serves lookups only once its engine forgot what it was owed. */
    private void bForgetsBeforeItsFirstLookup(byte[] raw, long[] pbns) {
        startB(); // returns once the master has b's dedup link in service
        assertThat(dedupB.forgotten()).as("delivered before the link went into service").isEqualTo(FREED);
        assertThat(owed.owed(2)).as("nothing owed any more").isZero();
        assertFreedMissedKeptFound(lookUpOnBThroughMaster(raw), pbns); // b's first answer on its new link
    }

    @Test
    void receivingWorkerDown_partTakenAndOwed_aIsNotHeldUp_bForgetsBeforeItsFirstLookup() {
        byte[] raw = blocks(44, N, false);
        bForgetsBeforeItsFirstLookup(raw, sweepWhileBIsDown(raw));
    }

    @Test
    void masterRestartsWhileBIsOwedAPart_keptOnDisk_deliveredByTheNewMaster() {
        byte[] raw = blocks(45, N, false);
        long[] pbns = sweepWhileBIsDown(raw);
        master.restartOnSamePort();
        forwardWithOwed(); // a new master process over the same directory
        assertThat(owed.owed(2)).as("read back after the restart").isEqualTo(1);
        bForgetsBeforeItsFirstLookup(raw, pbns);
    }

    @Test
    void withoutOwedForgets_partWaitsOnA_forwardedOnceBIsBack() {
        // a master that keeps nothing (the behaviour before this release): the sender keeps the part
        master.server.forwardStaleMarks(new StaleMarkForwarder(master.server.dedupLinks(), master.registry, ClusterMode.NEAREST));
        byte[] raw = blocks(47, N, false);
        long[] pbns = storeThenStopB(raw);
        sweepA();
        await().pollDelay(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> true);
        assertThat(a.rangeSweep().staleMarks().pending()).as("b is down: a keeps the part").hasSize(1);
        startB();
        await().atMost(Duration.ofSeconds(20)).until(() -> a.rangeSweep().staleMarks().pending().isEmpty());
        assertThat(dedupB.forgotten()).isEqualTo(FREED);
        long[] after = lookUpOnB(raw);
        for (int k = 0; k < FREED; k++) {
            assertThat(after[k]).as("block " + k).isNotEqualTo(pbns[k]);
        }
    }

    @Test
    void moreOwedThanKept_bDistrusted_itsAnswersNamingARangeAreMisses_neverAFreedBlock() {
        maxOwedParts = 0; // nothing fits: b is distrusted at the first part owed
        forwardWithOwed();
        byte[] raw = blocks(48, N, false);
        long[] pbns = storeThenStopB(raw);
        sweepA();
        await().atMost(Duration.ofSeconds(20)).until(() -> a.rangeSweep().staleMarks().pending().isEmpty());
        assertThat(owed.distrusted(2)).as("taken all the same: b is distrusted instead").isTrue();
        assertThat(owed.owed(2)).isZero();
        startB();
        assertThat(dedupB.forgotten()).as("nothing was kept for b").isZero();
        assertThat(lookUpOnB(raw)).as("b's engine still holds a's freed blocks").containsExactly(pbns);
        assertThat(lookUpOnBThroughMaster(raw)).as("the master takes b's answers in a's range as misses").containsOnly(0L);
        master.restartOnSamePort();
        forwardWithOwed();
        await().atMost(Duration.ofSeconds(20)).until(() -> master.server.dedupLinks().upByWorkerId().containsKey(2L));
        assertThat(lookUpOnBThroughMaster(raw)).as("still distrusted after a master restart").containsOnly(0L);
    }
}
