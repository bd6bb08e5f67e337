package org.holdfast.gc.bookkeeping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.gc.GcHarness;
import org.holdfast.gc.GmaProbe;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.retention.ExpiryCalculator;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.gc.retention.RetentionPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GcBookkeeperTest {
    private static final long DAY = Duration.ofDays(1).toMillis();
    private static final long HOUR = Duration.ofHours(1).toMillis();
    private static final long T0 = Instant.parse("2026-05-04T00:30:00Z").toEpochMilli(); // a Monday

    @TempDir
    Path dir;

    /** A volume's map and snapshot expiries, committing through the bookkeeper. */
    private static final class Vol {
        final VolumeId id;
        final long[] map;
        final long[] birth;
        final RangeMaxExpiry expiries = new RangeMaxExpiry();
        long seq;

        Vol(String name, int lbns) {
            id = new VolumeId(name);
            map = new long[lbns];
            birth = new long[lbns];
        }

        /** Commits changes lbn[i] -> pbn[i] with the given expiry; returns updates logged. */
        long commit(GcHarness h, long opId, long expiry, int[] lbns, long[] pbns) {
            seq++;
            List<DeltaEntry> delta = new ArrayList<>();
            for (int i = 0; i < lbns.length; i++) {
                int l = lbns[i];
                delta.add(new DeltaEntry(l, map[l], birth[l], pbns[i]));
                map[l] = pbns[i];
                birth[l] = seq;
            }
            long before = h.pipeline.updatesLogged();
            h.bookkeeper.apply(opId, new GcOperation.Commit(id, seq, delta, expiries));
            expiries.append(seq, expiry);
            return h.pipeline.updatesLogged() - before;
        }
    }

    @Test
    void correction1_blockSharedByLongAndShortVolume_notFreedEarly() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            Vol longVol = new Vol("long", 4);
            Vol shortVol = new Vol("short", 4);
            long p = 100;
            long op = 0;
            longVol.commit(h, ++op, T0 + 90 * DAY, new int[] {0}, new long[] {p});
            shortVol.commit(h, ++op, T0 + DAY, new int[] {0}, new long[] {p});
            clock.advance(Duration.ofHours(1));
            // long volume moves on first: RC(P) 2 -> 1, ET raised to 90 days
            longVol.commit(h, ++op, clock.millis() + 90 * DAY, new int[] {0}, new long[] {101});
            // short volume moves on: RC(P) -> 0; ET must stay at 90 days (thesis: would set ~1 day)
            shortVol.commit(h, ++op, clock.millis() + DAY, new int[] {0}, new long[] {102});
            h.pipeline.commitAll();
            assertThat(GmaProbe.rc(h.pipeline, p)).isZero();
            assertThat(GmaProbe.expiry(h.pipeline, p)).isEqualTo(T0 + 90 * DAY);
            clock.advance(Duration.ofDays(3));
            h.sweep();
            assertThat(h.reclaimed).doesNotContain(p);
            clock.set(T0 + 90 * DAY + 1);
            h.sweep();
            assertThat(h.reclaimed).contains(p);
            assertThat(GmaProbe.freed(h.pipeline, p)).isTrue();
        }
    }

    @Test
    void correction2_scheduleRetention_usesLatestExpiryOfSnapshotsThatSawTheBlock() {
        MutableClock clock = new MutableClock(T0);
        ExpiryCalculator calc = new ExpiryCalculator();
        RetentionPolicy policy = RetentionPolicy.parse("daily=7");
        List<Long> times = new ArrayList<>();
        try (GcHarness h = new GcHarness(dir, clock)) {
            Vol v = new Vol("sched", 4);
            long op = 0;
            long firstExpiry = 0;
            for (int s = 1; s <= 6; s++) {
                long e = calc.expiryOf(policy, clock.millis(), times);
                times.add(clock.millis());
                if (s == 1) {
                    firstExpiry = e;
                    v.commit(h, ++op, e, new int[] {0, 1}, new long[] {10, 11});
                } else if (s < 6) {
                    v.commit(h, ++op, e, new int[] {1}, new long[] {10 + s * 10L});
                } else {
                    // snapshot 6 replaces LBN 0, born in 1 and seen by 1..5: only 1 is a daily
                    v.commit(h, ++op, e, new int[] {0}, new long[] {99});
                }
                clock.advance(Duration.ofHours(2));
            }
            assertThat(firstExpiry).isEqualTo(Instant.parse("2026-05-11T00:00:00Z").toEpochMilli());
            h.pipeline.commitAll();
            assertThat(GmaProbe.expiry(h.pipeline, 10)).isEqualTo(firstExpiry);
            // block 30 (LBN 1 of snapshot 2, not a daily) only lived in snapshot 2: expires with it
            assertThat(GmaProbe.expiry(h.pipeline, 30)).isEqualTo(times.get(1));
            assertThat(GmaProbe.expiry(h.pipeline, 40)).isEqualTo(times.get(2));
            clock.advance(Duration.ofDays(2));
            h.sweep();
            assertThat(h.reclaimed).doesNotContain(10L, 11L, 60L, 99L).contains(30L, 40L, 50L);
            clock.set(firstExpiry + 1);
            h.sweep();
            assertThat(h.reclaimed).contains(10L);
        }
    }

    @Test
    void commit_updateCount_proportionalToDeltaNotVolume() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            Vol small = new Vol("small", 1_000);
            Vol big = new Vol("big", 200_000);
            long op = 0;
            long next = 1;
            for (Vol v : List.of(small, big)) {
                int[] all = new int[v.map.length];
                long[] pbns = new long[all.length];
                for (int i = 0; i < all.length; i++) {
                    all[i] = i;
                    pbns[i] = next++;
                }
                v.commit(h, ++op, T0 + DAY, all, pbns);
            }
            java.util.Random r = new java.util.Random(1);
            for (int round = 0; round < 5; round++) {
                for (Vol v : List.of(small, big)) {
                    int[] lbns = r.ints(0, v.map.length).distinct().limit(100).toArray();
                    long[] pbns = new long[100];
                    for (int i = 0; i < 100; i++) {
                        pbns[i] = next++;
                    }
                    long updates = v.commit(h, ++op, clock.millis() + DAY, lbns, pbns);
                    // +1 new, -1 before, raise ET before: exactly 3 per changed block
                    assertThat(updates).as(v.id + " round " + round).isEqualTo(300);
                }
                clock.advance(Duration.ofHours(1));
            }
        }
    }

    @Test
    void apply_sameOpIdTwice_secondIgnored_andZeroBlockNeverCounted() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            Vol v = new Vol("v", 4);
            v.commit(h, 1, T0 + DAY, new int[] {0, 1}, new long[] {5, 0});
            List<DeltaEntry> again = List.of(new DeltaEntry(0, 0, 0, 5));
            assertThat(h.bookkeeper.apply(1, new GcOperation.Commit(v.id, 1, again, v.expiries))).isFalse();
            h.pipeline.commitAll();
            assertThat(GmaProbe.rc(h.pipeline, 5)).isEqualTo(1);
            assertThat(GmaProbe.slot(h.pipeline, 0)[2]).isZero();
            assertThat(h.bookkeeper.lastAppliedOp()).isEqualTo(1);
        }
    }

    @Test
    void apply_badBirthSequence_rejectedAndNothingLogged() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = new GcHarness(dir, clock)) {
            List<DeltaEntry> bad = List.of(new DeltaEntry(0, 0, 0, 7), new DeltaEntry(1, 5, 3, 8));
            assertThatThrownBy(() -> h.bookkeeper.apply(1, new GcOperation.Commit(new VolumeId("v"), 3, bad,
                    new RangeMaxExpiry()))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("birth");
            assertThat(h.pipeline.updatesLogged()).isZero();
            assertThat(h.bookkeeper.lastAppliedOp()).isZero();
        }
    }
}
