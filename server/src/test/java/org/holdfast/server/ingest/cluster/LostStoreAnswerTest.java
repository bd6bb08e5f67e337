package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;
import static org.holdfast.server.ingest.cluster.RangeBlocks.blocks;
import static org.holdfast.server.ingest.cluster.RangeBlocks.fps;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A DATA_STORE whose DATA_STORED the link loses (a master's cluster port and one worker node in this
 * JVM, real sockets, a real range store, GMA, BOSC log and grace guard, a grace of {@link #GRACE_MS}
 * ms): the block the worker appended gets its own grace expiry there, so the range's sweep frees it
 * once the grace has passed (before this, no sweep ever saw it). And trying to lose data that way: a
 * block answered but not yet protected by the master's session (a session lands its stores late) is
 * never freed while its link lives, however long that takes; once protected the session holds it,
 * before its commit's delta reached the worker too; across a worker restart a committed block stays,
 * and an answered one that was never protected cannot be committed any more (its link's sync fails).
 */
class LostStoreAnswerTest {
    private static final long FIRST = OneRangeWorker.FIRST;
    private static final PbnRange MASTER_RANGE = new PbnRange(1, FIRST);
    private static final long GRACE_MS = 400;
    private static final long SESSION = 41;

    @TempDir
    Path dir;
    private TestMaster master;
    private Path tokenFile;
    private WorkerRangeData data;
    private WorkerGcMetadata gc;
    private WorkerConnector worker;
    private RangeReferenceGuard guard;
    private final Clock clock = Clock.systemUTC();

    @BeforeEach
    void start() throws Exception {
        master = RangeGcParts.master(dir, Duration.ofMillis(500));
        tokenFile = RangeGcParts.tokenFile(dir, master);
        openWorkerProcess();
        guard = new RangeReferenceGuard(MASTER_RANGE, ReferenceGuard.NONE, master.server.gcGuards());
    }

    /** The worker process's range data and GC metadata (opened again after a restart: recovery from disk). */
    private void openWorkerProcess() {
        Path node = dir.resolve("w1");
        data = RangeGcParts.rangeData(dir, node);
        gc = RangeGcParts.gcMetadata(node, Duration.ofMillis(GRACE_MS), clock);
        startLink();
    }

    private void startLink() {
        // the master has let the previous link go: every call below goes over the new one
        await().atMost(Duration.ofSeconds(20)).until(() -> master.server.rangeStores().up(1) == null);
        worker = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(dir), null, data, gc);
        worker.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> worker.status().connected() && master.server.rangeSweeps().up(1) != null
                && master.server.gcDeltas().up(1) != null && master.server.gcGuards().up(1) != null
                && master.server.rangeStores().up(1) != null && gc.guard() != null);
    }

    /** The worker process stops (its links, range data and GC metadata close). */
    private void stopWorkerProcess() {
        worker.close();
        worker = null;
        data.close();
        gc.close();
    }

    @AfterEach
    void stop() {
        if (worker != null) {
            stopWorkerProcess();
        }
        master.close();
    }

    private long storeOne(int seed) {
        byte[] b = blocks(seed, 1, false);
        return master.server.rangeStores().up(1).store(PayloadCodec.RAW, BS, 1, fps(b), b).join();
    }

    private boolean stored(long pbn) {
        return data.store().fingerprint(pbn, new StoredBlock());
    }

    /** The leak as fsck counts it: blocks of the range store whose GMA slot has RC 0 (no snapshot references them). */
    private int unreferencedStored() {
        BoscPipeline p = gc.pipeline();
        p.awaitDurable();
        int n = 0;
        for (long pbn = FIRST; pbn < data.store().nextPbn(); pbn++) {
            long[] rc = new long[1];
            long q = pbn;
            p.withCurrentChunk(p.layout().chunkOf(q), c -> rc[0] = c.rc(p.layout().slotOf(q)));
            if (rc[0] == 0 && stored(pbn)) {
                n++;
            }
        }
        return n;
    }

    private GcSwept sweep() {
        return master.server.rangeSweeps().up(1).sweep(GcSweep.NO_TIME, false).join();
    }

    @Test
    void storeWhoseAnswerTheLinkLost_freedByTheRangeSweepOnceTheGraceHasPassed() throws Exception {
        long kept = storeOne(1);
        UpdateBatch commit = new UpdateBatch();
        commit.add(UpdateKinds.RC_ADD, kept, 1); // a committed block beside it (its session protected it and ended)
        master.server.gcDeltas().up(1).send(1, commit).join();

        // the worker's data lane waits (the range data's lock held) while the link ends: the append comes after, its answer is lost
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = RangeGcParts.holdRangeData(data, release);
        byte[] b = blocks(2, 1, false);
        CompletableFuture<Long> lost = master.server.rangeStores().up(1).store(PayloadCodec.RAW, BS, 1, fps(b), b);
        ThreadsAt.blockedOn(data, RangeDataService.class); // the request reached the worker's lane
        worker.close();
        long appendedAfter = System.currentTimeMillis(); // the block's own expiry is at least this + the grace
        release.countDown();
        holder.join();
        long leaked = kept + 1;
        await().atMost(Duration.ofSeconds(10)).until(() -> stored(leaked));
        assertThatThrownBy(lost::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerLostException.class);
        assertThat(unreferencedStored()).as("the leak: stored, and the master never learnt its PBN").isEqualTo(1);

        startLink();
        long early = sweep().blocksFreed();
        if (System.currentTimeMillis() < appendedAfter + GRACE_MS) { // a loaded machine may take longer than the grace to get here
            assertThat(early).as("within the grace").isZero();
            assertThat(stored(leaked)).isTrue();
        }
        Thread.sleep(GRACE_MS + 200);
        GcSwept r = sweep();
        assertThat(early + r.blocksFreed()).isEqualTo(1);
        assertThat(stored(leaked)).isFalse();
        assertThat(unreferencedStored()).as("no leak left").isZero();
        assertThat(master.server.rangeStores().up(1).read(new long[] {kept}).join().get(0)).isEqualTo(blocks(1, 1, false));
        assertThat(gc.answered().pending()).isZero();
    }

    @Test
    void answeredStoreLandedLate_neverFreedBeforeItsSessionProtectsItNorBeforeTheCommitsDeltaArrives() throws Exception {
        long pbn = storeOne(3); // answered; the session lands it only at its next BLOCKS frame, which comes late
        assertThat(gc.answered().pending()).isEqualTo(1);
        Thread.sleep(GRACE_MS + 200); // the block's own expiry has passed
        assertThat(sweep().blocksFreed()).as("the answered store caps the horizon while its link lives").isZero();
        assertThat(stored(pbn)).isTrue();

        guard.protect(SESSION, new long[] {pbn}, 0, 1); // landed at last
        assertThat(gc.answered().pending()).as("protected: the session's tie holds it now").isZero();
        master.server.rangeStores().up(1).sync().join();
        Thread.sleep(GRACE_MS + 200); // committed on the master; its delta not yet on the worker, the session still open there
        assertThat(sweep().blocksFreed()).isZero();
        assertThat(stored(pbn)).isTrue();

        UpdateBatch commit = new UpdateBatch();
        commit.add(UpdateKinds.RC_ADD, pbn, 1);
        master.server.gcDeltas().up(1).send(1, commit).join();
        guard.release(SESSION, true);
        await().atMost(Duration.ofSeconds(10)).until(() -> gc.guard().openSessions() == 0);
        Thread.sleep(GRACE_MS + 200);
        GcSwept r = sweep();
        assertThat(r.blocksFreed()).isZero();
        assertThat(r.keptReferenced()).isEqualTo(1);
        assertThat(master.server.rangeStores().up(1).read(new long[] {pbn}).join().get(0)).isEqualTo(blocks(3, 1, false));
    }

    @Test
    void workerRestart_committedBlockKeptAndAnAnsweredUnprotectedOneCannotBeCommittedAndIsFreed() throws Exception {
        long committed = storeOne(4);
        guard.protect(SESSION, new long[] {committed}, 0, 1);
        RemoteRangeStore before = master.server.rangeStores().up(1);
        before.sync().join();
        UpdateBatch commit = new UpdateBatch();
        commit.add(UpdateKinds.RC_ADD, committed, 1);
        master.server.gcDeltas().up(1).send(1, commit).join();
        guard.release(SESSION, true);
        long answered = storeOne(5); // another session's store, answered, not protected yet
        before.sync().join();

        stopWorkerProcess(); // restart: what the worker kept in memory of its links is gone
        openWorkerProcess();
        assertThat(gc.answered().pending()).isZero();
        assertThatThrownBy(() -> before.sync().join()).as("that session's commit syncs over the link that stored its block")
                .isInstanceOf(CompletionException.class);
        Thread.sleep(GRACE_MS + 200);
        GcSwept r = sweep();
        assertThat(r.blocksFreed()).as("the answered block only: nothing can reference it").isEqualTo(1);
        assertThat(stored(answered)).isFalse();
        assertThat(r.keptReferenced()).isEqualTo(1);
        assertThat(master.server.rangeStores().up(1).read(new long[] {committed}).join().get(0)).isEqualTo(blocks(4, 1, false));
    }

    @Test
    void sessionWhoseEarlierLinkEnded_itsStoreOnTheNewLinkStopsCappingTheSweepWhenItFails() throws Exception {
        long before = storeOne(6);
        guard.protect(SESSION, new long[] {before}, 0, 1); // the session protected a block over the first link
        worker.close();
        startLink(); // a flap: the backup goes on storing over the new link
        long after = storeOne(7);
        assertThat(gc.answered().pending()).isEqualTo(1);

        // landed: the session fails (its protection over the first link ended with it), and nothing of it commits
        assertThatThrownBy(() -> guard.protect(SESSION, new long[] {after}, 0, 1)).isInstanceOf(BlocksUnavailableException.class);
        guard.release(SESSION, false);
        // still there, this entry would hold the range's sweep at its answer + grace for as long as the new link lives
        assertThat(gc.answered().pending()).as("the failed call still protected the store on the link that answered it").isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> gc.guard().openSessions() == 0);
        Thread.sleep(GRACE_MS + 200);
        GcSwept r = sweep();
        assertThat(r.blocksFreed()).as("both blocks of the failed backup, once their grace has passed").isEqualTo(2);
        assertThat(stored(before)).isFalse();
        assertThat(stored(after)).isFalse();
    }
}
