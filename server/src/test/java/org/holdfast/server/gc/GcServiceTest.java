package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GC over the real catalog, data store and exact index: commits, retention, holds, sweeps, crashes, fsck. */
class GcServiceTest {
    private static final VolumeId VOL = new VolumeId("gc-vol");
    private static final int BS = 4096;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final SimClock clock = new SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private MetadataDb db;
    private DataStore store;
    private FingerprintIndex index;
    private Catalog catalog;
    private GcService gc;
    private SnapshotCommit commit;
    private GcStoreFixture fixture;
    private boolean skipAfterCommit;
    private boolean closed;

    /** A settable clock. */
    static final class SimClock extends Clock {
        volatile long millis;

        SimClock(long m) {
            millis = m;
        }

        @Override
        public long millis() {
            return millis;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId z) {
            return this;
        }
    }

    @BeforeEach
    void open() {
        fixture = GcStoreFixture.open(dir, clock, 1L << 20, Duration.ofHours(2), 8,
                hook -> new CrashBeforeGcLogHook(hook, () -> skipAfterCommit));
        db = fixture.db;
        store = fixture.store;
        index = fixture.index;
        catalog = fixture.catalog;
        gc = fixture.gc;
        commit = fixture.commit;
    }

    @AfterEach
    void close() {
        if (closed) {
            return;
        }
        fixture.close();
    }

    private void crashAndReopen() {
        fixture.abandon();
        skipAfterCommit = false;
        open();
    }

    private long block(long seed) {
        return fixture.storeBlock(seed, BS);
    }

    private CommittedSnapshot commit(long parent, long blocks, long... lbnPbn) {
        SessionMap m = new SessionMap(4);
        for (int i = 0; i < lbnPbn.length; i += 2) {
            m.add(lbnPbn[i], lbnPbn[i + 1]);
        }
        return commit.commit(new SnapshotCommit.Request(VOL, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0));
    }

    private boolean stored(long pbn) {
        return store.fingerprint(pbn, new StoredBlock());
    }

    private void assertClean(long now) {
        FsckReport f = gc.fsck(now);
        assertThat(f.dataLoss()).as(f.toText()).isFalse();
        assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
    }

    @Test
    void expiredSnapshot_cycle_deletesItPrunesMapAndFreesOnlyItsOwnBlocks() {
        long p1 = block(1);
        long p2 = block(2);
        long p3 = block(3);
        commit(0, 2, 0, p1, 1, p2);
        clock.millis += HOUR;
        commit(1, 2, 0, p3);
        assertClean(clock.millis);
        clock.millis += 13 * HOUR;
        GcService.CycleReport r = gc.runCycle(clock.millis);
        assertThat(r.snapshotsDeleted()).isEqualTo(1);
        assertThat(r.mapEntriesPruned()).isEqualTo(1);
        assertThat(r.sweep().freed()).isEqualTo(1);
        assertThat(stored(p1)).isFalse();
        assertThat(stored(p2)).isTrue();
        assertThat(stored(p3)).isTrue();
        assertThat(catalog.snapshots(VOL)).hasSize(1);
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
    }

    @Test
    void hold_keepsExpiredSnapshotAndBlocks_untilReleased() {
        long p1 = block(1);
        long p2 = block(2);
        commit(0, 1, 0, p1);
        clock.millis += HOUR;
        commit(1, 1, 0, p2);
        gc.placeHold(VOL, 1);
        assertThat(gc.held(VOL, 1)).isTrue();
        clock.millis += 30 * HOUR;
        gc.runCycle(clock.millis);
        assertThat(catalog.snapshots(VOL)).hasSize(2);
        assertThat(stored(p1)).isTrue();
        assertClean(clock.millis);
        gc.releaseHold(VOL, 1);
        gc.runCycle(clock.millis);
        assertThat(catalog.snapshots(VOL)).hasSize(1);
        assertThat(stored(p1)).isFalse();
        assertClean(clock.millis);
    }

    @Test
    void crashAfterCatalogCommitBeforeGcLog_redriveCountsTheCommit() {
        long p1 = block(1);
        long p2 = block(2);
        commit(0, 2, 0, p1, 1, p2);
        clock.millis += HOUR;
        long p3 = block(3);
        skipAfterCommit = true; // the process dies right after the catalog batch is durable
        commit(1, 2, 1, p3);
        crashAndReopen();
        assertThat(gc.lastAppliedOp()).isEqualTo(2);
        assertClean(clock.millis);
        clock.millis += 13 * HOUR;
        gc.runCycle(clock.millis);
        assertThat(stored(p2)).isFalse();
        assertThat(stored(p1)).isTrue();
        assertThat(stored(p3)).isTrue();
        assertClean(clock.millis);
    }

    @Test
    void policyExtended_existingSnapshotsKeptLonger() {
        long p1 = block(1);
        long p2 = block(2);
        commit(0, 1, 0, p1);
        clock.millis += HOUR;
        commit(1, 1, 0, p2);
        gc.setPolicy(VOL, "7d");
        assertThat(gc.policy(VOL)).isEqualTo("1w");
        clock.millis += 2 * 24 * HOUR;
        gc.runCycle(clock.millis);
        assertThat(catalog.snapshots(VOL)).hasSize(2);
        assertThat(stored(p1)).isTrue();
        assertClean(clock.millis);
        assertThatThrownBy(() -> gc.setPolicy(VOL, "7 parsecs")).isInstanceOf(IllegalArgumentException.class);
        assertThat(gc.policy(VOL)).isEqualTo("1w");
    }

    @Test
    void blockFreedBySweep_cannotBeProtectedAgain_andGuardRefusesIt() {
        long p1 = block(1);
        clock.millis += 3 * HOUR; // its grace (2 h) has run out and no snapshot uses it
        gc.runCycle(clock.millis);
        assertThat(stored(p1)).isFalse();
        GcReferenceGuard guard = new GcReferenceGuard(gc);
        assertThatThrownBy(() -> guard.protect(1, new long[] {p1}, 0, 1)).isInstanceOf(ReclaimedBlockException.class);
        assertClean(clock.millis);
    }

    @Test
    void counted_followsTheReferenceCountOfCommits_notTheGraceOfBackups() {
        GcReferenceGuard guard = new GcReferenceGuard(gc);
        long p1 = block(1); // protected as a backup's block: grace expiry, no reference
        long p2 = block(2);
        assertThat(guard.counted(p1)).as("a block only a backup in progress holds").isFalse();
        commit(0, 1, 0, p1);
        assertThat(guard.counted(p1)).as("referenced by the newest snapshot, read right after its commit").isTrue();
        commit(1, 1, 0, p2);
        assertThat(guard.counted(p1)).as("dereferenced by the next snapshot").isFalse();
        assertThat(guard.counted(p2)).isTrue();
        assertThat(guard.counted(0)).isFalse();
        assertThat(ReferenceGuard.NONE.counted(p2)).as("no GC metadata: no count is known").isFalse();
    }

    @Test
    void gcDirectoryLost_reopen_refusesToCountFromZero() throws Exception {
        commit(0, 1, 0, block(1));
        fixture.close();
        closed = true;
        try (var files = java.nio.file.Files.walk(dir.resolve("gc"))) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        // the refused open closes what it had opened itself (GcStoreFixture.open)
        assertThatThrownBy(this::open).isInstanceOf(IllegalStateException.class).hasMessageContaining("GC metadata was lost");
    }

    @Test
    void fsckTool_stoppedDataDirectory_reportsCleanWithExitCode0() {
        long p1 = block(1);
        commit(0, 2, 0, p1, 1, block(2));
        clock.millis += HOUR;
        commit(1, 2, 0, block(3));
        close();
        closed = true;
        assertThat(FsckTool.run(dir)).isZero();
        assertThatThrownBy(() -> FsckTool.run(dir.resolve("nothing-here"))).hasMessageContaining("not a Holdfast data directory")
                .hasMessageEndingWith("give the server's holdfast.data-dir");
    }

    @Test
    void blockStoredButProtectionLostInCrash_reprotectedAtStartThenSwept() {
        commit(0, 1, 0, block(1));
        byte[] payload = new byte[BS];
        new Random(99).nextBytes(payload);
        long orphan = store.append(new byte[32], 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
        store.sync(); // stored, but the session died before protecting it
        FsckReport before = gc.fsck(clock.millis);
        assertThat(before.untracked().samples()).containsExactly(orphan);
        crashAndReopen();
        assertThat(gc.fsck(clock.millis).untracked().count()).isZero();
        clock.millis += 3 * HOUR;
        gc.runCycle(clock.millis);
        assertThat(stored(orphan)).isFalse();
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
    }

    @Test
    void gcLogFails_commitStillSucceeds_gcStopsUntilRestartRedrives() {
        long p1 = block(1);
        commit(0, 1, 0, p1);
        long p2 = block(2);
        gc.abandon(); // the GC pipeline is gone: the next apply fails
        CommittedSnapshot c = commit(1, 1, 0, p2);
        assertThat(c.snapshot().sequence()).isEqualTo(2);
        assertThat(gc.failure()).isNotNull();
        assertThatThrownBy(() -> gc.runCycle(clock.millis)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("restart");
        index.close();
        store.close();
        db.close();
        open();
        assertThat(gc.lastAppliedOp()).isEqualTo(2);
        assertClean(clock.millis);
        clock.millis += 13 * HOUR;
        gc.runCycle(clock.millis);
        assertThat(stored(p1)).isFalse();
        assertThat(stored(p2)).isTrue();
        assertClean(clock.millis);
    }

    @Test
    void cycle_sweepThenOnlineCompaction_freedSpaceReclaimed_everyRetainedSnapshotStillReads() throws Exception {
        long blocks = 64;
        long parent = 0;
        Random r = new Random(8);
        for (int i = 0; i < 14; i++) {
            SessionMap m = new SessionMap(64);
            for (long l = 0; l < blocks; l++) {
                m.add(l, block(r.nextLong())); // every snapshot rewrites the whole volume: 64 new blocks
            }
            commit.commit(new SnapshotCommit.Request(VOL, BS, blocks * BS, parent, m, blocks * BS, blocks, blocks, 0));
            parent++;
            clock.millis += HOUR;
        }
        clock.millis += 13 * HOUR; // all but the newest expire
        long before = dataBytes();
        GcService.CycleReport rep = gc.runCycle(clock.millis);
        assertThat(rep.sweep().freed()).isEqualTo(13 * blocks);
        // the same run compacted, with the store open
        assertThat(rep.compaction().logsDeleted() + rep.compaction().logsRewritten()).isPositive();
        assertThat(rep.compaction().bytesReclaimed()).isPositive();
        assertThat(gc.compactionTotals().bytesReclaimed()).isEqualTo(rep.compaction().bytesReclaimed());
        assertThat(dataBytes()).isLessThan(before / 2);
        var v = catalog.requireVolume(VOL);
        long[] pbns = SnapshotScan.pbns(catalog, v.internalId(), v.latestSequence(), blocks);
        StoredBlock b = new StoredBlock();
        for (long p : pbns) {
            store.read(p, b); // checksum verified
        }
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
        GcService.CycleReport again = gc.runCycle(clock.millis);
        assertThat(again.compaction().logsRewritten() + again.compaction().logsDeleted()).isZero(); // nothing left to do
        crashAndReopen();
        for (long p : pbns) {
            store.read(p, b);
        }
        assertThat(catalog.snapshots(VOL)).hasSize(1);
        assertClean(clock.millis);
    }

    @Test
    void sweepWhileAnotherThreadCompacts_noFreedBlockGetsALocationBack_noRetainedBlockLost() throws Exception {
        long blocks = 64;
        long parent = 0;
        Random r = new Random(9);
        java.util.List<Long> all = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            SessionMap m = new SessionMap(64);
            for (long l = 0; l < blocks; l++) {
                long p = block(r.nextLong());
                all.add(p);
                m.add(l, p);
            }
            commit.commit(new SnapshotCommit.Request(VOL, BS, blocks * BS, parent, m, blocks * BS, blocks, blocks, 0));
            parent++;
            clock.millis += HOUR;
        }
        clock.millis += 13 * HOUR; // all but the newest expire
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong rewritten = new java.util.concurrent.atomic.AtomicLong();
        java.util.List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread compacting = new Thread(() -> {
            try {
                while (!stop.get()) {
                    GcService.CompactionReport c = gc.compact();
                    rewritten.addAndGet(c.logsRewritten() + c.logsDeleted());
                }
            } catch (Throwable e) {
                errors.add(e);
            }
        }, "compactor");
        compacting.start();
        GcService.CycleReport rep = gc.runCycle(clock.millis); // the sweep frees while the other thread compacts
        stop.set(true);
        compacting.join();
        assertThat(errors).isEmpty();
        assertThat(rep.sweep().freed()).isEqualTo(9 * blocks);
        assertThat(rewritten.get() + rep.compaction().logsRewritten() + rep.compaction().logsDeleted()).isPositive();
        var v = catalog.requireVolume(VOL);
        java.util.Set<Long> retained = new java.util.HashSet<>();
        for (long p : SnapshotScan.pbns(catalog, v.internalId(), v.latestSequence(), blocks)) {
            retained.add(p);
        }
        for (int round = 0; round < 2; round++) {
            StoredBlock b = new StoredBlock();
            for (long p : all) {
                if (retained.contains(p)) {
                    store.read(p, b); // checksum and PBN verified
                } else {
                    assertThat(stored(p)).as("freed pbn %d has a location again", p).isFalse();
                }
            }
            assertClean(clock.millis);
            crashAndReopen();
        }
    }

    private long dataBytes() throws Exception {
        try (var files = java.nio.file.Files.list(dir.resolve("data"))) {
            return files.mapToLong(p -> p.toFile().length()).sum();
        }
    }

    @Test
    void manyCommitsCyclesAndCrashes_fsckAlwaysClean_snapshotsReadBack() {
        Random r = new Random(5);
        long parent = 0;
        long blocks = 64;
        long[] cur = new long[(int) blocks];
        for (int i = 0; i < 40; i++) {
            SessionMap m = new SessionMap(8);
            int[] lbns = r.ints(0, (int) blocks).distinct().limit(1 + r.nextInt(10)).sorted().toArray();
            for (int l : lbns) {
                long p = r.nextInt(5) == 0 && parent > 0 ? cur[r.nextInt((int) blocks)] : block(r.nextLong());
                if (p != 0 && !stored(p)) {
                    p = block(r.nextLong());
                } else if (p != 0) {
                    assertThat(gc.guard().protect(p)).isTrue();
                }
                m.add(l, p);
                cur[l] = p;
            }
            commit.commit(new SnapshotCommit.Request(VOL, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0));
            parent++;
            clock.millis += r.nextInt(4) * HOUR;
            if (r.nextInt(4) == 0) {
                gc.runCycle(clock.millis);
            }
            if (r.nextInt(8) == 0) {
                crashAndReopen();
            }
            assertClean(clock.millis);
        }
        for (long p : cur) {
            if (p != 0) {
                assertThat(stored(p)).isTrue();
            }
        }
        assertThat(Arrays.stream(cur).filter(p -> p != 0).count()).isGreaterThan(0);
    }

    // ------------------------------------------------------------------ operator deletions

    private static final VolumeId OTHER = new VolumeId("gc-other");

    private CommittedSnapshot commitTo(VolumeId v, long parent, long blocks, long... lbnPbn) {
        SessionMap m = new SessionMap(4);
        for (int i = 0; i < lbnPbn.length; i += 2) {
            m.add(lbnPbn[i], lbnPbn[i + 1]);
        }
        return commit.commit(new SnapshotCommit.Request(v, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0));
    }

    private boolean snapshotReads(VolumeId v, long seq) {
        var s = catalog.requireSnapshot(v, seq);
        for (long p : SnapshotScan.pbns(catalog, catalog.requireVolume(v).internalId(), seq, s.blockCount())) {
            if (!stored(p)) {
                return false;
            }
        }
        return true;
    }

    /** Two volumes share p2; VOL has an old snapshot (p1) and a newest one (p4); OTHER maps p2, p3. */
    private long[] twoVolumes() {
        long p1 = block(1);
        long p2 = block(2);
        long p3 = block(3);
        commit(0, 2, 0, p1, 1, p2);
        clock.millis += HOUR;
        long p4 = block(4);
        commit(1, 2, 0, p4);
        commitTo(OTHER, 0, 2, 0, p2, 1, p3);
        return new long[] {p1, p2, p3, p4};
    }

    @Test
    void deleteVolume_sharedBlocksKept_ownBlocksFreed_otherVolumeReads() {
        long[] p = twoVolumes();
        GcService.VolumeDeletion d = gc.deleteVolume(VOL, VolumeGate.NONE);
        assertThat(d.snapshotsDeleted()).isEqualTo(2);
        assertThat(d.blocksReleased()).isEqualTo(2);
        assertThat(d.mapEntriesDeleted()).isEqualTo(3);
        assertThat(catalog.volume(VOL)).isEmpty();
        assertClean(clock.millis);
        clock.millis += 3 * HOUR; // past the grace of every block; p1's ET (snapshot 1's 12 h expiry) not yet
        gc.runCycle(clock.millis);
        assertThat(stored(p[3])).as("newest-state block only VOL mapped").isFalse();
        assertThat(stored(p[0])).as("old-snapshot block keeps the ET the deleted snapshot gave it").isTrue();
        assertThat(stored(p[1])).as("shared with OTHER").isTrue();
        assertThat(stored(p[2])).isTrue();
        assertThat(snapshotReads(OTHER, 1)).isTrue();
        assertClean(clock.millis);
        clock.millis += 12 * HOUR;
        gc.runCycle(clock.millis);
        assertThat(stored(p[0])).isFalse();
        assertThat(stored(p[1])).isTrue();
        assertThat(snapshotReads(OTHER, 1)).isTrue();
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
        // idempotent from the outside: the volume is gone, a second request names an unknown volume
        assertThatThrownBy(() -> gc.deleteVolume(VOL, VolumeGate.NONE))
                .isInstanceOf(org.holdfast.server.catalog.UnknownVolumeException.class);
        // the name can be used again, from scratch
        long p5 = block(5);
        commitTo(VOL, 0, 1, 0, p5);
        assertThat(catalog.snapshots(VOL)).hasSize(1);
        assertClean(clock.millis);
    }

    @Test
    void deleteVolume_heldSnapshotOrBackupInProgress_refusedAndNothingChanges() {
        long[] p = twoVolumes();
        gc.placeHold(VOL, 1);
        assertThatThrownBy(() -> gc.deleteVolume(VOL, VolumeGate.NONE))
                .isInstanceOf(GcConflictException.class).hasMessageContaining("hold");
        gc.releaseHold(VOL, 1);
        VolumeGate busy = new VolumeGate() {
            @Override
            public boolean tryExclude(String volume) {
                return false;
            }

            @Override
            public void release(String volume) {
                throw new AssertionError("never taken");
            }
        };
        assertThatThrownBy(() -> gc.deleteVolume(VOL, busy))
                .isInstanceOf(GcConflictException.class).hasMessageContaining("backup in progress");
        assertThat(catalog.snapshots(VOL)).hasSize(2);
        clock.millis += 3 * HOUR;
        gc.runCycle(clock.millis);
        for (long pbn : p) {
            assertThat(stored(pbn)).isTrue();
        }
        assertThat(snapshotReads(VOL, 1)).isTrue();
        assertThat(snapshotReads(VOL, 2)).isTrue();
        assertClean(clock.millis);
    }

    @Test
    void deleteVolume_crashAtEitherStep_restartCompletesItWithoutDoubleCountOrLoss() {
        for (KillPoint point : List.of(KillPoints.GC_DELETE_VOLUME_AFTER_CATALOG_BATCH, KillPoints.GC_DELETE_VOLUME_AFTER_GC_LOG)) {
            long[] p = twoVolumes();
            KillPoints.arm(point, 1, KillPoints.Mode.THROW);
            assertThatThrownBy(() -> gc.deleteVolume(VOL, VolumeGate.NONE)).isInstanceOf(KillPoints.Killed.class);
            crashAndReopen();
            assertThat(catalog.volume(VOL)).as("crash point %s", point).isEmpty();
            assertClean(clock.millis);
            clock.millis += 3 * HOUR;
            gc.runCycle(clock.millis);
            assertThat(stored(p[3])).isFalse();
            assertThat(stored(p[1])).as("shared block counted down once only").isTrue();
            assertThat(snapshotReads(OTHER, 1)).isTrue();
            FsckReport f = gc.fsck(clock.millis);
            assertThat(f.dataLoss()).as(f.toText()).isFalse();
            assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
            // next round starts from a clean slate: OTHER goes too
            gc.deleteVolume(OTHER, VolumeGate.NONE);
            clock.millis += 30 * HOUR;
            gc.runCycle(clock.millis);
            assertThat(stored(p[1])).isFalse();
        }
    }

    @Test
    void deleteSnapshot_early_removesItKeepsOthersReadable_refusesNewestAndHeld() {
        long p1 = block(1);
        long p2 = block(2);
        long p3 = block(3);
        commit(0, 2, 0, p1, 1, p2);
        clock.millis += HOUR;
        commit(1, 2, 0, p3);
        clock.millis += HOUR;
        commit(2, 2, 1, p1);
        assertThatThrownBy(() -> gc.deleteSnapshot(VOL, 3)).isInstanceOf(GcConflictException.class).hasMessageContaining("newest");
        gc.placeHold(VOL, 2);
        assertThatThrownBy(() -> gc.deleteSnapshot(VOL, 2)).isInstanceOf(GcConflictException.class).hasMessageContaining("hold");
        gc.releaseHold(VOL, 2);
        gc.deleteSnapshot(VOL, 2);
        assertThat(catalog.snapshots(VOL)).extracting(s -> s.sequence()).containsExactly(1L, 3L);
        assertThatThrownBy(() -> gc.deleteSnapshot(VOL, 2)).isInstanceOf(org.holdfast.server.catalog.UnknownSnapshotException.class);
        assertClean(clock.millis);
        clock.millis += 3 * HOUR;
        gc.runCycle(clock.millis);
        assertThat(snapshotReads(VOL, 1)).isTrue();
        assertThat(snapshotReads(VOL, 3)).isTrue();
        assertClean(clock.millis);
    }
}
