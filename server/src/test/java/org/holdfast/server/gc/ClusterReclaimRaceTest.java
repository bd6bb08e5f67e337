package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.RestoreEnd;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.ClusterBroadcast;
import org.holdfast.server.engine.ClusterFingerprintIndex;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.engine.ForwardingDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SegmentAnswer;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.IngestSettings;
import org.holdfast.server.ingest.RecordingAuditLog;
import org.holdfast.server.ingest.TestTokens;
import org.holdfast.server.ingest.cluster.TlsWorkerNodes;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The race of issue 18 in master/worker mode: a worker answers a backup's lookup with a PBN that
 * the master's GC sweep is freeing at that moment (it has chosen it, and its {@code forget} has not
 * reached the worker yet). Real pieces: RocksDB catalog, data logs, the GC service's sweep, the
 * cluster engine over two {@link LocalDedupWorker}s (in process, or remote: behind their TLS links
 * to a real cluster port), the ingest on loopback.
 *
 * <p>The interleaving is forced with latches in test-scope hooks, no sleeps:
 * <ol>
 *   <li>the sweep tombstones its victims and starts to forget them: the first worker's
 *       {@code forget} stops ({@link Race#sweepChose});</li>
 *   <li>the backup's lookup reaches the worker that holds the blocks, which has not forgotten them,
 *       and answers their PBNs;</li>
 *   <li>the backup, holding that answer (and the blocks' proofs of possession, still there), asks
 *       its reference guard to protect them: the guard hook stops it there ({@link Race#ingestAtGuard})
 *       and lets the sweep finish (every worker forgets, the data store deletes the blocks);</li>
 *   <li>the guard decides.</li>
 * </ol>
 * With the guard as shipped ({@link GcReferenceGuard}) the tombstones refuse the PBNs, the backup
 * stores the blocks anew, and everything restores; with the guard disabled (accepts every PBN) the
 * backup commits references to freed blocks, which fsck and the restore both catch: the test shows
 * the race lost without the guard.
 *
 * <p>The other order: the backup protects the worker's answer, then the sweep runs before the
 * backup commits. With the guard, the grace expiry keeps the blocks live and the snapshot refers to
 * them; without it, the sweep frees them under the open backup, which again commits freed PBNs.
 */
class ClusterReclaimRaceTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 64;
    private static final long HOUR = 3_600_000L;
    private static final int WORKERS = 2;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private final List<RacedWorker> workers = new ArrayList<>();
    private GcStoreFixture fx;
    private RacingGuard guard;
    private IngestServer ingest;
    private TlsWorkerNodes remote;

    /** Where the workers run: in the master's process, or behind their TLS links to it. */
    enum Transport { IN_PROCESS, REMOTE }

    /** Opens the stack; the ingest asks {@code referenceGuard} (made from the GC service) through a {@link RacingGuard}. */
    private void open(Transport transport, Function<GcService, ReferenceGuard> referenceGuard) {
        SungemSettings settings = SungemFingerprintIndexTest.smallSettings();
        List<? extends DedupWorker> plain;
        if (transport == Transport.REMOTE) {
            remote = new TlsWorkerNodes(dir.resolve("cluster"), WORKERS, settings, clock); // the membership in a catalog of its own
            plain = remote.workers();
        } else {
            List<LocalDedupWorker> local = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                local.add(new LocalDedupWorker(i, dir.resolve("cluster").resolve("worker-" + i), settings, clock));
            }
            plain = local;
        }
        plain.forEach(w -> workers.add(new RacedWorker(w)));
        fx = GcStoreFixture.open(dir, clock, 1L << 20, Duration.ofHours(2), 4, hook -> hook, CommitParts.DEFAULT_PART_ENTRIES, null,
                db -> new ClusterFingerprintIndex(workers, ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE, settings.uSegment(),
                        Math.max(1, settings.uContainer() / 2)));
        guard = new RacingGuard(referenceGuard.apply(fx.gc));
        ingest = new IngestServer(IngestSettings.loopback(), new IngestServices(fx.store, fx.catalog, fx.commit, fx.index, guard, clock,
                new TestTokens(), new RecordingAuditLog()));
        ingest.start();
    }

    @AfterEach
    void close() {
        if (ingest != null) {
            ingest.close();
        }
        if (fx != null) {
            fx.close();
        }
        if (remote != null) {
            remote.close();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void lookupAnsweredWhileTheSweepFreesTheBlock_withTheGuard_blockIsStoredAnewAndEverythingRestores(Transport transport) {
        open(transport, gc -> new GcReferenceGuard(gc));
        byte[] image = random(new Random(21));
        Set<Long> doomed = backupAndExpire("old", image);

        RaceOutcome r = race("new", image, doomed, true);

        assertThat(r.sweepFreed).as("the sweep freed old's blocks").isEqualTo(BLOCKS);
        assertThat(r.answeredDoomed).as("the worker answered the blocks being freed (the race happened)").isEqualTo(BLOCKS);
        assertThat(guard.refused.get()).as("the guard refused every one of them").isEqualTo(BLOCKS);
        assertThat(r.committed.newBlocks()).as("and the backup stored them anew").isEqualTo(BLOCKS);
        Set<Long> mapped = pbns("new");
        assertThat(mapped).hasSize(BLOCKS).doesNotContainAnyElementsOf(doomed);
        for (long p : doomed) {
            assertThat(fx.store.fingerprint(p, new StoredBlock())).as("PBN %d was freed", p).isFalse();
        }
        assertSurvives(image, mapped);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void lookupAnsweredWhileTheSweepFreesTheBlock_withTheGuardDisabled_commitsFreedBlocksAndTheRaceIsLost(Transport transport) {
        open(transport, gc -> ReferenceGuard.NONE); // accepts every PBN: the guard disabled
        byte[] image = random(new Random(21));
        Set<Long> doomed = backupAndExpire("old", image);

        RaceOutcome r = race("new", image, doomed, true);

        assertThat(r.answeredDoomed).as("the race happened").isEqualTo(BLOCKS);
        assertLost(r, doomed);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void lookupAnsweredAndProtectedBeforeTheSweep_withTheGuard_sweepKeepsTheBlockAndTheBackupRefersToIt(Transport transport) {
        open(transport, gc -> new GcReferenceGuard(gc));
        byte[] image = random(new Random(22));
        Set<Long> doomed = backupAndExpire("old", image);

        RaceOutcome r = race("new", image, doomed, false);

        assertThat(r.answeredDoomed).as("the worker answered old's blocks").isEqualTo(BLOCKS);
        assertThat(r.sweepFreed).as("protected by the open backup: the sweep frees none").isZero();
        assertThat(guard.refused.get()).isZero();
        assertThat(r.committed.newBlocks()).as("every block a duplicate").isZero();
        Set<Long> mapped = pbns("new");
        assertThat(mapped).as("the snapshot refers to the still-live blocks").isEqualTo(doomed);
        assertSurvives(image, mapped);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void lookupAnsweredAndProtectedBeforeTheSweep_withTheGuardDisabled_commitsFreedBlocksAndTheRaceIsLost(Transport transport) {
        open(transport, gc -> ReferenceGuard.NONE);
        byte[] image = random(new Random(22));
        Set<Long> doomed = backupAndExpire("old", image);

        RaceOutcome r = race("new", image, doomed, false);

        assertThat(r.answeredDoomed).isEqualTo(BLOCKS);
        assertLost(r, doomed);
    }

    @org.junit.jupiter.api.Test
    void workerMissedTheForget_tombstonesLingeredOut_itsAnswersAreRefusedByTheFreedMark_blocksStoredAnewAndRestored() {
        open(Transport.IN_PROCESS, gc -> new GcReferenceGuard(gc));
        byte[] image = random(new Random(23));
        Set<Long> doomed = backupAndExpire("old", image);
        workers.forEach(w -> w.dropForgets = true); // an engine that missed the forget: it still answers the freed PBNs
        assertThat(fx.gc.runCycle(clock.millis).sweep().freed()).isEqualTo(BLOCKS);
        clock.millis += HOUR;
        fx.gc.runCycle(clock.millis); // prunes the sweep's tombstones: only the GMA's FREED marks are left
        assertThat(fx.gc.guard().tombstones()).isZero();

        Committed c = backup("new", image);

        assertThat(guard.refused.get()).as("the guard refused every freed PBN the engine answered").isEqualTo(BLOCKS);
        assertThat(c.newBlocks()).as("stored anew").isEqualTo(BLOCKS);
        assertThat(pbns("new")).hasSize(BLOCKS).doesNotContainAnyElementsOf(doomed);
        assertThat(restoreError("new", 1)).as("the snapshot restores").isNull();
        assertThat(restore("new", 1)).as("byte-identical").isEqualTo(image);
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
    }

    /** The committed snapshot ({@code mapped}) restores, fsck is clean, later cycles keep it, and the workers still answer its blocks. */
    private void assertSurvives(byte[] image, Set<Long> mapped) {
        assertThat(restoreError("new", 1)).as("the snapshot restores").isNull();
        assertThat(restore("new", 1)).as("byte-identical").isEqualTo(image);
        assertClean();

        clock.millis += 30 * HOUR;
        assertThat(fx.gc.runCycle(clock.millis).sweep().freed()).as("nothing of a retained snapshot is freed").isZero();
        Committed again = backup("again", image);
        assertThat(again.newBlocks()).as("deduplicated against the live copies").isZero();
        assertThat(pbns("again")).isEqualTo(mapped);
        assertThat(restore("again", 1)).isEqualTo(image);
        assertClean();
    }

    /** The race was lost: the backup committed references to the blocks the sweep freed; fsck and the restore both show it. */
    private void assertLost(RaceOutcome r, Set<Long> doomed) {
        assertThat(r.sweepFreed).as("the sweep freed old's blocks").isEqualTo(BLOCKS);
        assertThat(r.committed.newBlocks()).as("nothing stored anew: every block taken as a duplicate").isZero();
        Set<Long> mapped = pbns("new");
        assertThat(mapped).as("the committed snapshot references the freed blocks").isEqualTo(doomed);
        for (long p : mapped) {
            assertThat(fx.store.fingerprint(p, new StoredBlock())).as("PBN %d is gone from the data store", p).isFalse();
        }
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.dataLoss()).as(f.toText()).isTrue();
        assertThat(f.referencedButFreed().count()).as(f.toText()).isEqualTo(BLOCKS);
        assertThat(restoreError("new", 1)).as("the restore fails").isNotNull();
    }

    // ------------------------------------------------------------------ the interleaving

    /** The latches of one forced interleaving, shared by the hooks. */
    private static final class Race {
        /** The worker whose lookup is raced: the one that holds the blocks. */
        final int holder;
        final Set<Long> doomed;
        /** The sweep has tombstoned its victims and is about to make the workers forget them. */
        final CountDownLatch sweepChose = new CountDownLatch(1);
        /** The backup holds the worker's answer and asks the reference guard about it (sweep first), or has asked it. */
        final CountDownLatch ingestAtGuard = new CountDownLatch(1);
        /** The sweep is done: every worker forgot the victims, the data store deleted them, the GMA marks them FREED. */
        final CountDownLatch sweepDone = new CountDownLatch(1);
        final AtomicBoolean lookupArmed = new AtomicBoolean(true);
        final AtomicBoolean forgetArmed;
        final AtomicBoolean guardArmed = new AtomicBoolean();
        final AtomicInteger answeredDoomed = new AtomicInteger();

        /** True: the sweep chooses the blocks before the worker answers; false: the backup protects them before the sweep starts. */
        final boolean sweepFirst;

        Race(int holder, Set<Long> doomed, boolean sweepFirst) {
            this.holder = holder;
            this.doomed = doomed;
            this.sweepFirst = sweepFirst;
            this.forgetArmed = new AtomicBoolean(sweepFirst);
        }
    }

    private record RaceOutcome(Committed committed, long sweepFreed, int answeredDoomed) {
    }

    /**
     * Backs {@code image} up as {@code volume} while a GC cycle would free the blocks of the same
     * content ({@code doomed}): with {@code sweepFirst} interleaved as the class says, else the cycle
     * runs after the backup asked its guard about the worker's answer, before it commits.
     */
    private RaceOutcome race(String volume, byte[] image, Set<Long> doomed, boolean sweepFirst) {
        Race race = new Race(holder(), doomed, sweepFirst);
        workers.forEach(w -> w.race = race);
        guard.race = race;
        CompletableFuture<GcService.CycleReport> cycle = CompletableFuture.supplyAsync(() -> {
            try {
                if (!sweepFirst) {
                    await(race.ingestAtGuard, "backup protecting the worker's answer");
                }
                return fx.gc.runCycle(clock.millis);
            } finally {
                race.sweepDone.countDown();
            }
        });
        Committed c = backup(volume, image);
        GcService.CycleReport report = cycle.join();
        assertThat(race.lookupArmed.get() || race.forgetArmed.get() || race.guardArmed.get()).as("every hook fired").isFalse();
        return new RaceOutcome(c, report.sweep().freed(), race.answeredDoomed.get());
    }

    /** Backs up {@code image}, deletes the volume and lets its blocks' expiry pass: the next sweep frees them all. */
    private Set<Long> backupAndExpire(String volume, byte[] image) {
        assertThat(backup(volume, image).newBlocks()).isEqualTo(BLOCKS);
        Set<Long> pbns = pbns(volume);
        assertThat(pbns).hasSize(BLOCKS);
        fx.gc.deleteVolume(new VolumeId(volume), VolumeGate.NONE);
        clock.millis += 13 * HOUR; // past the default policy's 12 h and the 2 h grace
        return pbns;
    }

    /** The one worker holding stored fingerprints (a new segment goes to one worker). */
    private int holder() {
        int holder = -1;
        for (RacedWorker w : workers) {
            if (w.load().storedEntries() > 0) {
                assertThat(holder).as("one worker holds the blocks").isEqualTo(-1);
                holder = w.id();
            }
        }
        assertThat(holder).as("a worker holds the blocks").isNotNegative();
        return holder;
    }

    private static void await(CountDownLatch latch, String what) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("the interleaving stalled: no " + what + " within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** A worker whose first lookup on the holder may wait for the sweep's choice, and whose first forget may wait for the backup. */
    private static final class RacedWorker extends ForwardingDedupWorker {
        volatile Race race;
        /** Drops every forget (an engine that missed them). */
        volatile boolean dropForgets;

        RacedWorker(DedupWorker delegate) {
            super(delegate);
        }

        @Override
        public CompletableFuture<SegmentAnswer> lookup(SegmentLookup request) {
            Race r = race;
            if (r == null || r.holder != id() || !r.lookupArmed.compareAndSet(true, false)) {
                return delegate.lookup(request);
            }
            if (r.sweepFirst) {
                await(r.sweepChose, "sweep choosing the blocks");
            }
            SegmentAnswer a = delegate.lookup(request).join();
            int n = 0;
            for (int i = 0; i < a.count(); i++) {
                n += r.doomed.contains(a.pbns()[i]) ? 1 : 0;
            }
            r.answeredDoomed.set(n);
            r.guardArmed.set(true);
            return CompletableFuture.completedFuture(a);
        }

        @Override
        public void forget(long[] pbns, byte[] fps, int count) {
            if (dropForgets) {
                return;
            }
            Race r = race;
            if (r != null && r.forgetArmed.compareAndSet(true, false)) {
                r.sweepChose.countDown();
                await(r.ingestAtGuard, "backup asking its guard");
            }
            delegate.forget(pbns, fps, count);
        }
    }

    /** The ingest's guard, counting refusals; the raced lookup's protection waits there (before or after it) until the sweep is done. */
    private static final class RacingGuard implements ReferenceGuard {
        private final ReferenceGuard delegate;
        final AtomicInteger refused = new AtomicInteger();
        volatile Race race;

        RacingGuard(ReferenceGuard delegate) {
            this.delegate = delegate;
        }

        @Override
        public void protect(long sessionId, long[] pbns, int off, int count) {
            delegate.protect(sessionId, pbns, off, count);
        }

        @Override
        public int protectOrRefuse(long sessionId, long[] pbns, int off, int count) {
            Race r = race;
            boolean raced = r != null && r.guardArmed.compareAndSet(true, false);
            if (raced && r.sweepFirst) {
                r.ingestAtGuard.countDown();
                await(r.sweepDone, "end of the sweep");
            }
            int n = delegate.protectOrRefuse(sessionId, pbns, off, count);
            refused.addAndGet(n);
            if (raced && !r.sweepFirst) {
                r.ingestAtGuard.countDown();
                await(r.sweepDone, "end of the sweep");
            }
            return n;
        }

        @Override
        public void release(long sessionId, boolean committed) {
            delegate.release(sessionId, committed);
        }
    }

    // ------------------------------------------------------------------ helpers

    private void assertClean() {
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
        for (long p : allMappedPbns()) {
            assertThat(fx.store.fingerprint(p, new StoredBlock())).as("mapped PBN %d is stored", p).isTrue();
        }
    }

    private static byte[] random(Random r) {
        byte[] b = new byte[BLOCKS * BS];
        r.nextBytes(b);
        return b;
    }

    private Committed backup(String volume, byte[] image) {
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            return a.backup(volume, image, BS, true);
        }
    }

    private byte[] restore(String volume, long seq) {
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            return a.restore(volume, seq).image();
        }
    }

    /** Restores {@code volume}@{@code seq}, discarding the data: what went wrong (the server's error), or null if it ended normally. */
    private String restoreError(String volume, long seq) {
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            a.send(new Restore(volume, seq, 0));
            while (true) {
                Object o = a.next();
                if (o instanceof ErrorMessage e) {
                    return e.code() + ": " + e.message();
                }
                if ("closed".equals(o)) {
                    return "connection closed";
                }
                if (o instanceof RestoreEnd) {
                    return null;
                }
            }
        }
    }

    private Set<Long> pbns(String volume) {
        return fx.mappedPbns(fx.catalog.requireVolume(new VolumeId(volume)));
    }

    /** Every PBN a committed snapshot of any volume maps. */
    private Set<Long> allMappedPbns() {
        Set<Long> out = new HashSet<>();
        for (VolumeRecord v : fx.catalog.volumes()) {
            out.addAll(fx.mappedPbns(v));
        }
        return out;
    }
}
