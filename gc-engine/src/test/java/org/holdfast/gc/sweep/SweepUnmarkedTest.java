package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.gc.GcHarness;
import org.holdfast.gc.GmaProbe;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reclaim-now's free step in the engine: it ignores expiries, keeps marked, counted, pinned and
 * in-flight PBNs, and the watch covers every PBN sessions protected while it is open.
 */
class SweepUnmarkedTest {
    private static final long T0 = 1_800_000_000_000L;
    private static final long YEAR = 365L * 24 * 3_600_000L;

    @TempDir
    Path dir;

    private static final UnmarkedSweepListener QUIET = new UnmarkedSweepListener() {
        @Override
        public void freeing(long[] pbns) {
        }

        @Override
        public void batchDone(long examined, long freed) {
        }
    };

    @Test
    void sweepUnmarked_farExpiries_freesOnlyUnmarkedUncountedUnpinnedAndNotInFlight() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            for (long p = 1; p <= 6; p++) {
                h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, p, T0 + YEAR); // a deleted snapshot's expiry
            }
            h.bookkeeper.apply(1, new GcOperation.Pin(new long[] {4}));
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 5, 1);
            LivePbns marked = new LivePbns();
            marked.add(2);
            try (GraceGuard.Watch w = h.guard.watch()) {
                assertThat(h.guard.protect(9, new long[] {3}, 0, 1, false)).isZero(); // a backup in progress matches 3
                UnmarkedSweepReport r = h.sweeper.sweepUnmarked(marked, w, clock.millis(), QUIET);
                assertThat(h.reclaimed).containsExactlyInAnyOrder(1L, 6L);
                assertThat(r.freed()).isEqualTo(2);
                assertThat(r.keptMarked()).isEqualTo(1);
                assertThat(r.keptInFlight()).isEqualTo(1);
                assertThat(r.keptPinned()).isEqualTo(1);
                assertThat(r.keptReferenced()).isEqualTo(1);
            }
            assertThat(GmaProbe.freed(h.pipeline, 1)).isTrue();
            assertThat(GmaProbe.freed(h.pipeline, 3)).isFalse();
            // the ordinary sweep would have waited a year for all of them
            h.reclaimed.clear();
            assertThat(h.sweeper.sweep(clock.millis()).freed()).isZero();
        }
    }

    @Test
    void watch_sessionProtectedBeforeAndEndedDuring_staysCoveredUntilClosed() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            h.guard.protect(1, new long[] {10, 11}, 0, 2, false); // open before the watch
            h.guard.protect(2, new long[] {12}, 0, 1, false);
            h.guard.sessionEnded(2); // ended before the watch: committed (in the mark) or abandoned
            try (GraceGuard.Watch w = h.guard.watch()) {
                h.guard.protect(3, new long[] {13}, 0, 1, false); // began during the watch
                h.guard.sessionEnded(1); // commits during the watch, a later commit may dereference 10
                h.guard.sessionEnded(3);
                long[] candidates = {10, 11, 12, 13, 14};
                int n = w.dropProtected(candidates, candidates.length);
                assertThat(java.util.Arrays.copyOf(candidates, n)).containsExactly(12, 14);
                assertThat(w.size()).isEqualTo(3);
                assertThatThrownBy(h.guard::watch).isInstanceOf(IllegalStateException.class);
            }
            try (GraceGuard.Watch w = h.guard.watch()) {
                assertThat(w.size()).as("a new watch starts from the open sessions only").isZero();
            }
        }
    }

    @Test
    void sweepUnmarked_listenerThrowsAfterFirstBatch_keepsThatBatchFreedAndStops() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            long far = org.holdfast.gc.gma.GmaFormat.pbnAt(9, 1); // chunk 9: the second batch (the harness takes 8 chunks per batch)
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 1, T0 + YEAR);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, far, T0 + YEAR);
            List<Long> batches = new ArrayList<>();
            try (GraceGuard.Watch w = h.guard.watch()) {
                assertThatThrownBy(() -> h.sweeper.sweepUnmarked(new LivePbns(), w, clock.millis(), new UnmarkedSweepListener() {
                    @Override
                    public void freeing(long[] pbns) {
                    }

                    @Override
                    public void batchDone(long examined, long freed) {
                        batches.add(freed);
                        throw new IllegalStateException("cancelled");
                    }
                })).hasMessage("cancelled");
            }
            assertThat(batches).containsExactly(1L);
            assertThat(GmaProbe.freed(h.pipeline, 1)).isTrue();
            assertThat(GmaProbe.freed(h.pipeline, far)).isFalse();
        }
    }

    @Test
    void livePbns_addAndContains_acrossPages() {
        LivePbns s = new LivePbns();
        assertThat(s.add(0)).isFalse();
        assertThat(s.add(1)).isTrue();
        assertThat(s.add(1)).isFalse();
        assertThat(s.add(1L << 40)).isTrue();
        assertThat(s.add(64L * 65536 - 1)).isTrue(); // last PBN of the first page
        assertThat(s.contains(1)).isTrue();
        assertThat(s.contains(2)).isFalse();
        assertThat(s.contains((1L << 40) + 1)).isFalse();
        assertThat(s.contains(64L * 65536 - 1)).isTrue();
        assertThat(s.contains(64L * 65536)).isFalse();
        assertThat(s.count()).isEqualTo(3);
    }
}
