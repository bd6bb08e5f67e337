package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.holdfast.gc.GcHarness;
import org.holdfast.gc.GmaProbe;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SweeperTest {
    private static final long T0 = 1_800_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void sweep_freesOnlyUnreferencedExpiredUnpinnedUnprotected() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            // 1: RC 1 (referenced), 2: RC 0 ET future, 3: RC 0 ET past pinned, 4: RC 0 ET past,
            // 5: protected by a backup in progress, 6: RC went 1 -> 0 with ET past, 7: RC 1 with ET past
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 1, 1);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 2, T0 + 1000);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 3, T0 - 1000);
            h.bookkeeper.apply(1, new GcOperation.Pin(new long[] {3}));
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 4, T0 - 1000);
            assertThat(h.guard.protect(5)).isTrue();
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 6, 1);
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 6, -1);
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 7, 1);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 7, T0 - 5);
            SweepReport r = h.sweep();
            assertThat(h.reclaimed).containsExactlyInAnyOrder(4L, 6L);
            assertThat(r.freed()).isEqualTo(2);
            assertThat(r.keptReferenced()).isEqualTo(2);
            assertThat(r.keptPinned()).isEqualTo(1);
            assertThat(r.keptUnexpired()).isEqualTo(2);
            assertThat(GmaProbe.freed(h.pipeline, 4)).isTrue();
            assertThat(GmaProbe.freed(h.pipeline, 1)).isFalse();
            // a second sweep frees nothing new
            assertThat(h.sweep().freed()).isZero();
            // grace runs out, the pin is released, 2 expires: now 2, 3 and 5 go; 1 and 7 stay referenced
            clock.advance(Duration.ofHours(7));
            h.bookkeeper.apply(2, new GcOperation.Unpin(new long[] {3}));
            h.sweep();
            assertThat(h.reclaimed).containsExactlyInAnyOrder(2L, 3L, 4L, 5L, 6L);
        }
    }

    /**
     * A reclaim that fails (a master's: a dedup worker away, or lost between two DEDUP_FORGET frames)
     * frees nothing, and the next sweep must choose the same blocks again. The failed visit took the
     * chunk's touched mark, and the chunk was known from an earlier visit with nothing pending: the
     * skip table must not let the next sweep pass it by (the block would stay unfreed, and
     * tombstoned, until something else touched its chunk).
     */
    @Test
    void reclaimFails_nextSweepFreesWhatTheFailedOneChose_thoughTheChunkWasSkippableBefore() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            AtomicBoolean workerAway = new AtomicBoolean();
            Set<Long> reclaimed = new HashSet<>();
            Sweeper sweeper = new Sweeper(h.pipeline, h.guard, (pbns, n) -> {
                if (workerAway.get()) {
                    throw new IllegalStateException("cannot free blocks while dedup worker w1 (id 2) is not connected");
                }
                for (int i = 0; i < n; i++) {
                    reclaimed.add(pbns[i]);
                }
            }, 8);
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 9, 1); // referenced: visited, then skippable
            assertThat(sweeper.sweep(clock.millis()).freed()).isZero();
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 9, -1); // its snapshot expired: RC 0, no grace left
            workerAway.set(true);
            assertThatThrownBy(() -> sweeper.sweep(clock.millis())).hasMessageContaining("is not connected");
            assertThat(reclaimed).isEmpty();
            workerAway.set(false);

            SweepReport r = sweeper.sweep(clock.millis());

            assertThat(reclaimed).as("freed by the sweep after the failed one").containsExactly(9L);
            assertThat(r.freed()).isEqualTo(1);
            assertThat(GmaProbe.freed(h.pipeline, 9)).isTrue();
        }
    }

    @Test
    void protect_afterSweepChoseTheBlock_refused_beforeIt_blockSurvives() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 9, T0 - 1);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 10, T0 - 1);
            assertThat(h.guard.protect(10)).isTrue(); // a backup matched 10 as a duplicate in time
            h.sweep();
            assertThat(h.reclaimed).containsExactly(9L);
            assertThat(h.guard.protect(9)).as("freed block must not be referenced").isFalse();
            assertThat(h.guard.protect(10)).isTrue();
            assertThat(h.guard.protect(0)).isTrue();
        }
    }

    @Test
    void dryRun_countsWithoutFreeing() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 9, T0 - 1);
            SweepReport r = h.sweeper.dryRun(clock.millis());
            assertThat(r.reclaimable()).isEqualTo(1);
            assertThat(r.freed()).isZero();
            assertThat(h.reclaimed).isEmpty();
            assertThat(h.guard.protect(9)).isTrue();
        }
    }

    @Test
    void concurrentProtectAndSweep_neverFreesAProtectedBlock() throws Exception {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            int n = 20_000;
            for (long p = 1; p <= n; p++) {
                h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, p, T0 - 1);
            }
            java.util.Set<Long> protectedOk = java.util.concurrent.ConcurrentHashMap.newKeySet();
            Thread ingest = new Thread(() -> {
                for (long p = n; p >= 1; p -= 2) {
                    if (h.guard.protect(p)) {
                        protectedOk.add(p);
                    }
                }
            });
            ingest.start();
            h.sweep();
            ingest.join();
            h.sweep();
            for (long p : protectedOk) {
                assertThat(h.reclaimed).doesNotContain(p);
                assertThat(GmaProbe.freed(h.pipeline, p)).isFalse();
            }
            assertThat(protectedOk.size() + h.reclaimed.size()).isGreaterThanOrEqualTo(n);
        }
    }

    @Test
    void sweep_visitsOnlyTouchedOrDueChunks_yetFreesEverythingThatBecomesReclaimable() {
        MutableClock clock = new MutableClock(T0);
        long per = org.holdfast.gc.gma.GmaFormat.PBNS_PER_CHUNK;
        long a = 5;            // chunk 0: referenced
        long b = per + 5;      // chunk 1: referenced, later dereferenced
        long c = 2 * per + 5;  // chunk 2: unreferenced, expires in an hour
        try (GcHarness h = new GcHarness(dir, clock)) {
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, a, 1);
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, b, 1);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, c, T0 + 3_600_000);
            SweepReport first = h.sweep();
            assertThat(first.chunksScanned()).isEqualTo(3);
            assertThat(first.freed()).isZero();
            SweepReport idle = h.sweep();
            assertThat(idle.chunksScanned()).as("nothing changed, nothing due").isZero();
            assertThat(idle.keptReferenced()).as("counts of skipped chunks carried over").isEqualTo(2);
            assertThat(idle.keptUnexpired()).isEqualTo(1);

            h.pipeline.appendSingle(UpdateKinds.RC_ADD, b, -1);
            SweepReport touched = h.sweep();
            assertThat(touched.chunksScanned()).isEqualTo(1);
            assertThat(h.reclaimed).containsExactly(b);

            // a dry run must not hide a change from the next real sweep
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, a, -1);
            assertThat(h.sweeper.dryRun(clock.millis()).reclaimable()).isEqualTo(1);
            h.sweep();
            assertThat(h.reclaimed).containsExactlyInAnyOrder(a, b);

            // no update at all: chunk 2 is visited again once its pending expiry has passed
            clock.advance(Duration.ofHours(2));
            SweepReport due = h.sweep();
            assertThat(due.chunksScanned()).isEqualTo(1);
            assertThat(h.reclaimed).containsExactlyInAnyOrder(a, b, c);
            assertThat(GmaProbe.freed(h.pipeline, c)).isTrue();
        }
    }
}
