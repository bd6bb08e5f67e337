package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;
import static org.holdfast.server.ingest.cluster.RangeBlocks.blocks;
import static org.holdfast.server.ingest.cluster.RangeBlocks.fps;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSweepFailed;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.SegmentAnswer;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SteppingClock;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker sweeping its range when the master asks, over a real link (a master's cluster port and
 * one worker node in this JVM, real sockets, a real range store, GMA, BOSC log and Sungem engine):
 * blocks stored with DATA_STORE, referenced and dereferenced with GC_DELTA, then GC_SWEEP frees
 * exactly the unreferenced, expired, unprotected ones (their reads fail as freed, the engine no
 * longer answers them, every kept block reads back byte for byte after the compaction), never a
 * block with RC &gt; 0 or an expiry ahead of the worker's clock whatever time the master names; a
 * second sweep while one runs is refused busy; a sweep whose link is lost before it computed its
 * horizon is reported lost and frees nothing.
 */
class GcSweepLinkTest {
    private static final long FIRST = OneRangeWorker.FIRST;
    private static final long DAY = 86_400_000L;
    /** Blocks stored; the first {@link #DEREFERENCED} lose their one reference again. */
    private static final int N = 24;
    private static final int DEREFERENCED = 16;
    /** Of those, these keep an expiry a day ahead of the worker's clock. */
    private static final int FUTURE_A = 6;
    private static final int FUTURE_B = 7;
    /** And this one a backup in progress protects on the worker (its grace guard). */
    private static final int GUARDED = 5;

    @TempDir
    Path dir;
    private TestMaster master;
    private Path tokenFile;
    private WorkerRangeData data;
    private WorkerGcMetadata gc;
    private LazyDedupWorker dedup;
    private WorkerConnector worker;
    private final SteppingClock clock = new SteppingClock(Instant.now()); // moved past a grace by hand

    @BeforeEach
    void start() throws Exception {
        master = RangeGcParts.master(dir, Duration.ofMillis(500));
        tokenFile = RangeGcParts.tokenFile(dir, master);
        Path node = dir.resolve("w1");
        data = RangeGcParts.rangeData(dir, node);
        gc = RangeGcParts.gcMetadata(node, Duration.ofHours(1), clock);
        dedup = RangeGcParts.engine(node.resolve("dedup-worker"), clock);
        startLink();
    }

    private void startLink() {
        worker = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(dir), dedup, data, gc);
        worker.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> worker.status().connected() && master.server.rangeSweeps().up(1) != null
                && master.server.gcDeltas().up(1) != null && master.server.rangeStores().up(1) != null);
    }

    @AfterEach
    void stop() {
        if (worker != null) {
            worker.close();
        }
        data.close();
        gc.close();
        dedup.close();
        master.close();
    }

    /** The blocks stored, their PBNs, and the worker's engine taught them (as a record after a backup would). */
    private record Stored(byte[] raw, long[] pbns) {
        byte[] block(int k) {
            return Arrays.copyOfRange(raw, k * BS, (k + 1) * BS);
        }

        byte[] fp(int k) {
            return Arrays.copyOfRange(fps(block(k)), 0, 32);
        }
    }

    private Stored storeBlocks() {
        byte[] raw = blocks(7, N, false);
        long[] pbns = RangeGcParts.storeAndRecord(master.server.rangeStores().up(1), raw, N, dedup);
        // the backup that stored them protected them and committed; its grace on the worker has passed since
        LandedBackup.protectAndEnd(master.server, gc, 1, pbns);
        clock.advance(Duration.ofHours(2));
        return new Stored(raw, pbns);
    }

    /** RC+1 for every block (a commit), then RC-1 for the first ones with an expiry a day ago or, for two, a day ahead (a deletion). */
    private void referenceThenDereference(Stored s) {
        long now = clock.millis();
        GcDeltaScript.commitThenDelete(master.server.gcDeltas().up(1), s.pbns(), DEREFERENCED,
                k -> k == FUTURE_A || k == FUTURE_B ? now + DAY : now - DAY);
    }

    private static boolean freedOnTheWorker(Stored s, int k) {
        return k < DEREFERENCED && k != FUTURE_A && k != FUTURE_B && k != GUARDED;
    }

    private SegmentAnswer lookUp(Stored s) {
        return dedup.lookup(new SegmentLookup(1, fps(s.raw()), N)).join();
    }

    @Test
    void sweep_unreferencedExpiredBlocks_freedExactlyAndEveryKeptBlockReadsBack() {
        Stored s = storeBlocks();
        referenceThenDereference(s);
        assertThat(gc.guard().protect(s.pbns()[GUARDED])).as("a backup in progress matched it").isTrue();
        SegmentAnswer before = lookUp(s);
        assertThat(Arrays.copyOf(before.pbns(), N)).as("the engine answers every block before the sweep").containsExactly(s.pbns());
        RemoteRangeSweep sweep = master.server.rangeSweeps().up(1);

        GcSwept dry = sweep.sweep(GcSweep.NO_TIME, true).join();
        assertThat(dry.dryRun()).isTrue();
        assertThat(dry.reclaimable()).isEqualTo(DEREFERENCED - 3);
        assertThat(dry.blocksFreed()).isZero();
        assertThat(dry.bytesFreed()).as("no compaction in a dry run").isEqualTo(GcSwept.UNKNOWN_BYTES);
        assertThat(master.server.rangeStores().up(1).read(s.pbns()).join()).as("a dry run frees nothing").hasSize(N);

        // a master whose clock is ten years ahead: the worker sweeps by its own clock
        long before0 = clock.millis();
        GcSwept r = sweep.sweep(before0 + 3650 * DAY, false).join();
        assertThat(r.blocksFreed()).isEqualTo(DEREFERENCED - 3).isEqualTo(r.reclaimable());
        assertThat(r.horizon()).as("the worker's own clock, not the master's").isBetween(before0, clock.millis());
        assertThat(r.keptReferenced()).isEqualTo(N - DEREFERENCED);
        assertThat(r.keptUnexpired()).as("two with an expiry ahead, one guarded").isEqualTo(3);
        assertThat(r.bytesFreed()).as("the compaction after the sweep rewrote the log").isPositive();

        DataStore store = data.store();
        RemoteRangeStore remote = master.server.rangeStores().up(1);
        for (int k = 0; k < N; k++) {
            long p = s.pbns()[k];
            if (freedOnTheWorker(s, k)) {
                assertThatThrownBy(() -> store.read(p, new StoredBlock())).as("PBN " + p).isInstanceOf(CorruptDataException.class)
                        .hasMessageContaining("no location for this PBN (never stored, or freed)");
                // handed out there and freed: answered as a damaged block (a catalog that still references it lost it)
                assertThatThrownBy(() -> remote.read(new long[] {p}).join()).isInstanceOf(CompletionException.class)
                        .hasCauseInstanceOf(RangeBlockDamagedException.class).hasMessageContaining("no record of it on this worker");
            } else {
                assertThat(remote.read(new long[] {p}).join().get(0)).as("kept block " + k + " byte for byte").isEqualTo(s.block(k));
            }
        }
        SegmentAnswer after = lookUp(s);
        for (int k = 0; k < N; k++) {
            if (freedOnTheWorker(s, k)) {
                assertThat(after.pbns()[k]).as("the engine never answers freed PBN of block " + k).isNotEqualTo(s.pbns()[k]);
            }
        }
        assertThat(dedup.forgotten()).isEqualTo(DEREFERENCED - 3);

        WorkerRangeSweep.Progress progress = worker.rangeSweep().progress();
        assertThat(progress.running()).isFalse();
        assertThat(progress.last().sweep().freed()).as("the worker keeps its last result").isEqualTo(DEREFERENCED - 3);

        GcSwept again = sweep.sweep(GcSweep.NO_TIME, false).join();
        assertThat(again.blocksFreed()).as("nothing more to free").isZero();
        assertThat(again.keptReferenced()).isEqualTo(N - DEREFERENCED);
    }

    @Test
    void sweep_masterNamesAnyTime_neverFreesAReferencedBlockOrOneWhoseExpiryIsAhead() {
        Stored s = storeBlocks();
        referenceThenDereference(s);
        RemoteRangeSweep sweep = master.server.rangeSweeps().up(1);
        long freed = 0;
        for (long now : new long[] {Long.MAX_VALUE, clock.millis() + 2 * DAY, 1, GcSweep.NO_TIME}) {
            freed += sweep.sweep(now, false).join().blocksFreed();
        }
        assertThat(freed).as("only the expired, unreferenced ones (nothing guarded in this test)").isEqualTo(DEREFERENCED - 2);
        List<byte[]> kept = master.server.rangeStores().up(1).read(Arrays.copyOfRange(s.pbns(), DEREFERENCED, N)).join();
        for (int k = DEREFERENCED; k < N; k++) {
            assertThat(kept.get(k - DEREFERENCED)).as("RC 1: block " + k).isEqualTo(s.block(k));
        }
        long[] ahead = {s.pbns()[FUTURE_A], s.pbns()[FUTURE_B]};
        List<byte[]> aheadRead = master.server.rangeStores().up(1).read(ahead).join();
        assertThat(aheadRead.get(0)).as("expiry a day ahead of the worker's clock").isEqualTo(s.block(FUTURE_A));
        assertThat(aheadRead.get(1)).isEqualTo(s.block(FUTURE_B));
    }

    /** A thread holding the range data's lock until {@code release} (or 30 s), returned once it holds it. */
    private Thread holdRangeData(CountDownLatch release) throws InterruptedException {
        return RangeGcParts.holdRangeData(data, release);
    }

    @Test
    void sweep_secondWhileOneRuns_refusedBusyAndTheFirstFinishes() throws Exception {
        Stored s = storeBlocks();
        referenceThenDereference(s);
        RemoteRangeSweep sweep = master.server.rangeSweeps().up(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdRangeData(release); // the first sweep waits in its lock (as behind a long disk operation)
        CompletableFuture<GcSwept> first = sweep.sweep(GcSweep.NO_TIME, false);
        await().atMost(Duration.ofSeconds(10)).until(() -> worker.rangeSweep().progress().running());
        assertThatThrownBy(() -> sweep.sweep(GcSweep.NO_TIME, false).join()).isInstanceOf(CompletionException.class)
                .cause().isInstanceOfSatisfying(RangeSweepRefusedException.class, e -> assertThat(e.reason()).isEqualTo(GcSweepFailed.BUSY))
                .hasMessageContaining("is busy: a sweep of PBNs " + sweep.range() + " runs already on this worker")
                .hasMessageContaining("ask again once it answered");
        assertThat(first).as("the first still runs").isNotDone();
        release.countDown();
        holder.join();
        assertThat(first.get(20, TimeUnit.SECONDS).blocksFreed()).isEqualTo(DEREFERENCED - 2);
    }

    @Test
    void sweep_linkLostBeforeItsHorizon_reportedLostAndTheWorkerFreesNothing() throws Exception {
        Stored s = storeBlocks();
        referenceThenDereference(s);
        RemoteRangeSweep sweep = master.server.rangeSweeps().up(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdRangeData(release);
        WorkerRangeSweep onTheWorker = worker.rangeSweep();
        WorkerSweeps round = new WorkerSweeps(master.server.rangeSweeps(), () -> List.of(1L, 2L), id -> 0, Duration.ofSeconds(20));
        CompletableFuture<List<WorkerSweeps.Outcome>> outcomes = CompletableFuture.supplyAsync(() -> round.sweep(clock.millis(), false));
        await().atMost(Duration.ofSeconds(10)).until(() -> worker.rangeSweep().progress().running());
        master.server.close(); // the link drops mid-sweep (the worker process lives on, trying to reconnect)
        List<WorkerSweeps.Outcome> o = outcomes.get(20, TimeUnit.SECONDS);
        assertThat(o).extracting(WorkerSweeps.Outcome::state).containsExactly(WorkerSweeps.State.LOST, WorkerSweeps.State.LOST);
        assertThat(o.get(0).detail()).contains("sweeping worker w1").contains("is lost: its link closed");
        assertThat(o.get(1).detail()).contains("not connected");
        assertThat(sweep.isUp()).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> !worker.status().connected()); // the worker saw its link end too
        release.countDown();
        holder.join();
        await().atMost(Duration.ofSeconds(20)).until(() -> onTheWorker.progress().lastFailure() != null);
        // the backups of that link ended with it, so a horizon computed now may not be held back by them
        assertThat(onTheWorker.progress().lastFailure()).contains("the link to the master that asked for this sweep ended");
        assertThat(onTheWorker.progress().last()).isNull();
        assertThat(onTheWorker.progress().running()).isFalse();
        for (long p : s.pbns()) {
            assertThat(data.store().fingerprint(p, new StoredBlock())).as("PBN " + p + " not freed").isTrue();
        }
    }

    @Test
    void close_whileASweepRuns_theSweepEndsBeforeFreeingAndTheNextProcessFreesAll() throws Exception {
        Stored s = storeBlocks();
        referenceThenDereference(s);
        RemoteRangeSweep sweep = master.server.rangeSweeps().up(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdRangeData(release);
        sweep.sweep(GcSweep.NO_TIME, false);
        WorkerRangeSweep onTheWorker = worker.rangeSweep();
        await().atMost(Duration.ofSeconds(10)).until(() -> onTheWorker.progress().running());
        long start = System.nanoTime();
        CompletableFuture<Void> closed = CompletableFuture.runAsync(worker::close);
        // the close reaches the sweep's stop (after the link's close and the event loop's shutdown) before the
        // sweep goes on: else the sweep may see only the link gone, which it reports without "the worker is stopping"
        ThreadsAt.inMethod(WorkerRangeSweep.class, "stop");
        release.countDown(); // the sweep goes on into a stopping worker
        holder.join();
        closed.get(30, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("close waited for the sweep's end, not its 30 s bound")
                .isLessThan(Duration.ofSeconds(20));
        assertThat(onTheWorker.progress().running()).isFalse();
        assertThat(onTheWorker.progress().lastFailure()).contains("the worker is stopping");
        assertThat(onTheWorker.tryBegin()).as("no sweep starts on a stopping worker").isFalse();
        for (long p : s.pbns()) {
            assertThat(data.store().fingerprint(p, new StoredBlock())).as("PBN " + p + " not freed").isTrue();
        }
        startLink(); // the next process over the same directories
        GcSwept r = master.server.rangeSweeps().up(1).sweep(GcSweep.NO_TIME, false).join();
        assertThat(r.blocksFreed()).as("the next sweep frees what the stopped one left").isEqualTo(DEREFERENCED - 2);
    }

    @Test
    void workerSweeps_outboxNotDrained_skippedAndTheOthersSwept() {
        Stored s = storeBlocks();
        referenceThenDereference(s);
        WorkerSweeps skip = new WorkerSweeps(master.server.rangeSweeps(), () -> List.of(1L), id -> 3, Duration.ofSeconds(20));
        List<WorkerSweeps.Outcome> o = skip.sweep(clock.millis(), false);
        assertThat(o).singleElement().satisfies(x -> {
            assertThat(x.state()).isEqualTo(WorkerSweeps.State.DELTAS_PENDING);
            assertThat(x.detail()).contains("3 GC deltas are not yet acknowledged");
        });
        assertThat(master.server.rangeStores().up(1).read(s.pbns()).join()).as("nothing freed").hasSize(N);
        WorkerSweeps go = new WorkerSweeps(master.server.rangeSweeps(), () -> List.of(1L), id -> 0, Duration.ofSeconds(20));
        WorkerSweeps.Outcome swept = go.sweep(clock.millis(), false).get(0);
        assertThat(swept.state()).isEqualTo(WorkerSweeps.State.SWEPT);
        assertThat(swept.report().blocksFreed()).isEqualTo(DEREFERENCED - 2);
        GcSwept r = swept.report();
        assertThat(r.keptUnexpired()).as("the two whose expiry lies a day ahead").isEqualTo(2);
        assertThat(swept.detail()).as("the job log says why blocks were kept").contains((DEREFERENCED - 2) + " blocks freed",
                "kept 2 unreferenced whose expiry (grace or retention) lies ahead, " + r.keptReferenced() + " referenced, "
                        + r.keptPinned() + " pinned");
    }
}
