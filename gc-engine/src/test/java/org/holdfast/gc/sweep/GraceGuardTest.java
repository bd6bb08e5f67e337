package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.gc.GcHarness;
import org.holdfast.gc.GmaProbe;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Batched protection, and protection tied to the open session for backups longer than the grace. */
class GraceGuardTest {
    private static final long T0 = 1_800_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void protect_backupLongerThanGrace_earlyBlocksSurviveWhileSessionOpen_goAfterItEnds() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) { // grace 6 h
            // the session writes 100 and matches 200 early on, and keeps running for 30 hours
            assertThat(h.guard.protect(7, new long[] {100, 200}, 0, 2, true)).isZero();
            for (int hour = 1; hour <= 30; hour++) {
                clock.advance(Duration.ofHours(1));
                assertThat(h.guard.protect(7, new long[] {1000 + hour}, 0, 1, true)).isZero();
                h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            }
            assertThat(h.reclaimed).as("blocks of a backup still in progress").isEmpty();
            assertThat(GmaProbe.freed(h.pipeline, 100)).isFalse();
            // the same sweep without the session tie would have freed them: the test can fail
            assertThat(h.guard.sweepHorizon(clock.millis())).isLessThan(clock.millis());
            SweepReport dry = h.sweeper.dryRun(clock.millis());
            assertThat(dry.reclaimable()).isGreaterThanOrEqualTo(2);

            // the session is abandoned: nothing counts the blocks, so they go once the grace has run out
            h.guard.sessionEnded(7);
            assertThat(h.guard.openSessions()).isZero();
            assertThat(h.guard.sweepHorizon(clock.millis())).isEqualTo(clock.millis());
            h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            assertThat(h.reclaimed).contains(100L, 200L, 1001L).doesNotContain(1030L);
        }
    }

    @Test
    void protect_batch_logsOneRaisePerDistinctBlock_refusesTombstoned() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 9, T0 - 1);
            h.sweeper.sweep(clock.millis());
            assertThat(h.reclaimed).containsExactly(9L);
            long before = h.pipeline.updatesLogged();
            // spread over many chunks and stripes, with zeros and a repeat
            long[] pbns = {5, 5, 0, 9, 20_000, 70_000, 77};
            assertThat(h.guard.protect(1, pbns, 0, pbns.length, false)).isEqualTo(1);
            assertThat(h.pipeline.updatesLogged()).as("a refused batch logs nothing").isEqualTo(before);
            assertThat(pbns[3]).isEqualTo(9);
            assertThat(h.guard.protect(1, pbns, 0, pbns.length, true)).isEqualTo(1);
            assertThat(pbns[3]).isZero();
            assertThat(h.pipeline.updatesLogged() - before).isEqualTo(4); // 5 once, 20 000, 70 000, 77
            clock.advance(Duration.ofHours(5));
            h.sweeper.sweep(clock.millis());
            assertThat(h.reclaimed).containsExactly(9L);
            h.guard.sessionEnded(1);
            clock.advance(Duration.ofHours(2));
            h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            assertThat(h.reclaimed).containsExactlyInAnyOrder(9L, 5L, 20_000L, 70_000L, 77L);
        }
    }

    @Test
    void protectStored_expiryFromTheGivenTime_tiedToNoSession_refusesTombstoned() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) { // grace 6 h
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 9, T0 - 1);
            h.sweeper.sweep(clock.millis());
            assertThat(h.reclaimed).containsExactly(9L);
            long before = h.pipeline.updatesLogged();
            assertThat(h.guard.protectStored(new long[] {9, 40}, 0, 2, T0)).as("tombstoned: nothing logged").isEqualTo(1);
            assertThat(h.pipeline.updatesLogged()).isEqualTo(before);

            // stored an hour ago (the worker's append): ET = then + grace, and no session holds the sweep back
            assertThat(h.guard.protectStored(new long[] {40, 41}, 0, 2, T0 - Duration.ofHours(1).toMillis())).isZero();
            assertThat(h.guard.openSessions()).isZero();
            clock.advance(Duration.ofHours(4));
            h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            assertThat(h.reclaimed).as("within the grace of the append").containsExactly(9L);
            clock.advance(Duration.ofHours(1).plusMinutes(1));
            assertThat(h.guard.sweepHorizon(clock.millis())).isEqualTo(clock.millis());
            h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            assertThat(h.reclaimed).containsExactlyInAnyOrder(9L, 40L, 41L);
        }
    }

    @Test
    void tombstone_sweepHorizonHeldBackByALongBackup_stillLingersItsTimeAfterTheReclaim() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) { // grace 6 h, tombstones linger 5 min
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 9, T0 - 1);
            assertThat(h.guard.protect(7, new long[] {100}, 0, 1, true)).isZero(); // a backup opens at T0 ...
            clock.advance(Duration.ofHours(30)); // ... and runs for 30 h: the horizon stays at T0 + 6 h
            h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            assertThat(h.reclaimed).containsExactly(9L);
            h.guard.sessionEnded(7);
            clock.advance(Duration.ofSeconds(10));
            // the next sweep, 10 s later, at a horizon 24 h past the first one's
            h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            long[] late = {9};
            assertThat(h.guard.protect(8, late, 0, 1, true)).as("a lookup of 9 still in flight 10 s after its reclaim").isEqualTo(1);
            assertThat(late[0]).isZero();
            clock.advance(Duration.ofMinutes(6));
            h.sweeper.sweep(h.guard.sweepHorizon(clock.millis()));
            assertThat(h.guard.tombstones()).as("the tombstone is gone once it lingered its 5 min").isZero();
            long[] later = {9};
            assertThat(h.guard.protect(8, later, 0, 1, true)).as("the GMA's FREED mark refuses it still").isEqualTo(1);
            assertThat(later[0]).isZero();
        }
    }

    @Test
    void protect_freedPbnAfterTombstoneLingeredOut_refusedForGood_alsoAfterRestart() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) { // tombstones linger 5 min
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 9, T0 - 1);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 20_009, T0 - 1);
            h.sweeper.sweep(clock.millis());
            assertThat(h.reclaimed).containsExactlyInAnyOrder(9L, 20_009L);
            clock.advance(Duration.ofHours(1));
            h.sweeper.sweep(clock.millis()); // prunes the tombstones
            assertThat(h.guard.tombstones()).isZero();

            // a stale engine answers 9 and 20 009 as duplicates beside live blocks, an hour after their free
            long before = h.pipeline.updatesLogged();
            long[] strict = {5, 9, 0, 20_009};
            assertThat(h.guard.protect(1, strict, 0, strict.length, false)).isEqualTo(2);
            assertThat(h.pipeline.updatesLogged()).as("a refused strict batch logs nothing").isEqualTo(before);
            assertThat(strict).containsExactly(5, 9, 0, 20_009);
            assertThat(h.guard.refuses(9)).isTrue();
            assertThat(h.guard.refuses(5)).isFalse();
            long[] dups = {5, 9, 0, 20_009};
            assertThat(h.guard.protect(1, dups, 0, dups.length, true)).isEqualTo(2);
            assertThat(dups).as("refused entries are stored anew by the caller").containsExactly(5, 0, 0, 0);
            assertThat(h.guard.protect(9)).isFalse();
            h.pipeline.commitAll();
            // the raise of a refused block never reached its slot: no freed slot looks protected
            assertThat(GmaProbe.expiry(h.pipeline, 9)).isEqualTo(T0 - 1);

            h.crash(); // no tombstones in a new process
            assertThat(h.guard.tombstones()).isZero();
            long[] again = {9, 20_009, 5};
            assertThat(h.guard.protect(2, again, 0, again.length, true)).as("after a restart").isEqualTo(2);
            assertThat(again).containsExactly(0, 0, 5);
            assertThat(h.guard.protect(20_009)).isFalse();
            assertThat(GmaProbe.freed(h.pipeline, 9)).isTrue();
        }
    }
}
