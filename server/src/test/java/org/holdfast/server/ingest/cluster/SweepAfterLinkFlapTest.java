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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup in progress whose link to a worker flaps, and the worker's sweep (a master's cluster port
 * and one worker node in this JVM, real sockets, a real range store, GMA, BOSC log and grace guard
 * with a grace of {@link #GRACE_MS} ms): the worker ends the backup's session with the link, so the
 * block the backup protected there is held by its expiry alone, which passes while the backup still
 * runs. The master does not sweep that worker until the backup ends (HELD), and a sweep that reached
 * the worker as the link closed frees nothing; once the backup commits and its counts arrived, the
 * worker is swept and keeps the block.
 */
class SweepAfterLinkFlapTest {
    private static final long FIRST = OneRangeWorker.FIRST;
    private static final PbnRange MASTER_RANGE = new PbnRange(1, FIRST);
    private static final long GRACE_MS = 400;
    private static final long SESSION = 77;

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
        Path node = dir.resolve("w1");
        data = RangeGcParts.rangeData(dir, node);
        gc = RangeGcParts.gcMetadata(node, Duration.ofMillis(GRACE_MS), clock);
        startLink();
        guard = new RangeReferenceGuard(MASTER_RANGE, ReferenceGuard.NONE, master.server.gcGuards());
    }

    /** A new link of the same worker process (its range data and GC metadata stay). */
    private void startLink() {
        worker = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(dir), null, data, gc);
        worker.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> worker.status().connected() && master.server.rangeSweeps().up(1) != null
                && master.server.gcDeltas().up(1) != null && master.server.gcGuards().up(1) != null && gc.guard() != null);
    }

    @AfterEach
    void stop() {
        if (worker != null) {
            worker.close();
        }
        data.close();
        gc.close();
        master.close();
    }

    /** One block stored on the worker (RC 0 until a commit counts it), then protected there by session {@link #SESSION}. */
    private long storeAndProtect() {
        byte[] b = blocks(3, 1, false);
        long pbn = master.server.rangeStores().up(1).store(PayloadCodec.RAW, BS, 1, fps(b), b).join();
        master.server.rangeStores().up(1).sync().join();
        guard.protect(SESSION, new long[] {pbn}, 0, 1); // its expiry on the worker: now + grace, tied to the session
        assertThat(gc.guard().openSessions()).isEqualTo(1);
        return pbn;
    }

    private boolean stored(long pbn) {
        return data.store().fingerprint(pbn, new StoredBlock());
    }

    @Test
    void workerSweeps_backupProtectedOverAnEndedLink_heldUntilItCommitsThenSweptAndTheBlockKept() throws Exception {
        long b = storeAndProtect();
        worker.close(); // the link ends (as a flap or a worker restart): the worker ends the session with it
        await().atMost(Duration.ofSeconds(10)).until(() -> gc.guard().openSessions() == 0);
        startLink(); // registered again; the backup makes no further call to this worker
        Thread.sleep(GRACE_MS + 200); // the block's expiry passes while the backup still runs
        AtomicLong outbox = new AtomicLong();
        WorkerSweeps round = new WorkerSweeps(master.server.rangeSweeps(), () -> List.of(1L), id -> outbox.get(),
                guard::heldByEndedLinks, Duration.ofSeconds(20), Duration.ZERO);

        WorkerSweeps.Outcome held = round.sweep(clock.millis(), false).get(0);
        assertThat(held.state()).isEqualTo(WorkerSweeps.State.HELD);
        assertThat(held.detail()).contains("1 backups in progress protected blocks on it over an earlier connection");
        assertThat(worker.rangeSweep().progress().last()).as("not asked").isNull();
        assertThat(stored(b)).as("the block the backup is about to commit").isTrue();

        // the commit: its counts go to the outbox first, then the session is released
        outbox.set(1);
        guard.release(SESSION, true);
        assertThat(guard.heldByEndedLinks(new PbnRange(FIRST, FIRST + MembershipSettings.DEFAULT_RANGE_SIZE))).isZero();
        assertThat(round.sweep(clock.millis(), false).get(0).state()).as("the hold lifted, the counts not there yet")
                .isEqualTo(WorkerSweeps.State.DELTAS_PENDING);
        UpdateBatch commit = new UpdateBatch();
        commit.add(UpdateKinds.RC_ADD, b, 1);
        master.server.gcDeltas().up(1).send(1, commit).join();
        outbox.set(0);

        WorkerSweeps.Outcome swept = round.sweep(clock.millis(), false).get(0);
        assertThat(swept.state()).isEqualTo(WorkerSweeps.State.SWEPT);
        assertThat(swept.report().blocksFreed()).isZero();
        assertThat(swept.report().keptReferenced()).as("RC 1: the committed snapshot's block").isEqualTo(1);
        assertThat(master.server.rangeStores().up(1).read(new long[] {b}).join().get(0)).isEqualTo(blocks(3, 1, false));
    }

    @Test
    void workerSweeps_backupAbandonedAfterTheFlap_holdLiftsAndItsBlockIsFreed() throws Exception {
        long b = storeAndProtect();
        worker.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> gc.guard().openSessions() == 0);
        startLink();
        Thread.sleep(GRACE_MS + 200);
        WorkerSweeps round = new WorkerSweeps(master.server.rangeSweeps(), () -> List.of(1L), id -> 0, guard::heldByEndedLinks,
                Duration.ofSeconds(20), Duration.ZERO);
        assertThat(round.sweep(clock.millis(), false).get(0).state()).isEqualTo(WorkerSweeps.State.HELD);

        guard.release(SESSION, false); // the backup failed: nothing references its block
        WorkerSweeps.Outcome swept = round.sweep(clock.millis(), false).get(0);
        assertThat(swept.state()).isEqualTo(WorkerSweeps.State.SWEPT);
        assertThat(swept.report().blocksFreed()).isEqualTo(1);
        assertThat(stored(b)).isFalse();
    }

    @Test
    void workerSweeps_backupOnTheCurrentLink_notHeldAndItsBlockKeptByTheOpenSession() throws Exception {
        long b = storeAndProtect();
        Thread.sleep(GRACE_MS + 200); // the open session caps the worker's horizon at its start + grace
        WorkerSweeps round = new WorkerSweeps(master.server.rangeSweeps(), () -> List.of(1L), id -> 0, guard::heldByEndedLinks,
                Duration.ofSeconds(20), Duration.ZERO);
        WorkerSweeps.Outcome swept = round.sweep(clock.millis(), false).get(0);
        assertThat(swept.state()).isEqualTo(WorkerSweeps.State.SWEPT);
        assertThat(swept.report().blocksFreed()).isZero();
        assertThat(stored(b)).isTrue();
    }

    @Test
    void sweep_linkEndsBeforeItsHorizon_freesNothingThoughTheSessionEndedWithTheLink() throws Exception {
        long b = storeAndProtect();
        Thread.sleep(GRACE_MS + 200);
        RemoteRangeSweep sweep = master.server.rangeSweeps().up(1);
        WorkerRangeSweep onTheWorker = worker.rangeSweep();
        CountDownLatch release = new CountDownLatch(1);
        // the range data's lock held: the sweep waits in it before it computes its horizon
        Thread holder = RangeGcParts.holdRangeData(data, release);
        CompletableFuture<GcSwept> asked = sweep.sweep(GcSweep.NO_TIME, false);
        await().atMost(Duration.ofSeconds(10)).until(() -> onTheWorker.progress().running());
        master.server.close(); // the link ends with the sweep under way; the worker process lives on
        await().atMost(Duration.ofSeconds(10)).until(() -> gc.guard().openSessions() == 0); // the session ended with it
        release.countDown();
        holder.join();
        await().atMost(Duration.ofSeconds(20)).until(() -> !onTheWorker.progress().running());

        assertThat(onTheWorker.progress().lastFailure()).contains("the link to the master that asked for this sweep ended");
        assertThat(onTheWorker.progress().last()).as("no sweep finished").isNull();
        assertThat(stored(b)).as("its expiry passed and no session holds it: only the abort kept it").isTrue();
        assertThatThrownBy(asked::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerLostException.class);
    }
}
