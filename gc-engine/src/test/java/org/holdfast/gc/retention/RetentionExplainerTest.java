package org.holdfast.gc.retention;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RetentionExplainerTest {
    private static final long HOUR = 3_600_000L;
    private final RetentionExplainer explainer = new RetentionExplainer();
    private final ExpiryCalculator calc = new ExpiryCalculator();

    private static long t(String iso) {
        return Instant.parse(iso).toEpochMilli();
    }

    @Test
    void explain_randomTimesAndPolicies_expiryIsExactlyTheCalculators() {
        Random rnd = new Random(11);
        for (int round = 0; round < 2000; round++) {
            RetentionPolicy p = randomPolicy(rnd);
            List<Long> times = randomTimes(rnd);
            long now = times.get(times.size() - 1) + (long) (rnd.nextDouble() * 400 * 24 * HOUR);
            List<RetentionExplainer.Verdict> v = explainer.explainTimes(p, times, now);
            assertThat(v).hasSize(times.size());
            for (int i = 0; i < times.size(); i++) {
                long expected = calc.expiryOf(p, times.get(i), times.subList(0, i));
                assertThat(v.get(i).expiry()).as("policy %s, snapshot %d of %s", p, i, times).isEqualTo(expected);
                assertThat(v.get(i).createdAt()).isEqualTo(times.get(i));
            }
        }
    }

    @Test
    void explain_randomHistories_keptExactlyWhenThePlannerDoesNotDelete() {
        Random rnd = new Random(12);
        RetentionPlanner planner = new RetentionPlanner();
        for (int round = 0; round < 2000; round++) {
            RetentionPolicy p = randomPolicy(rnd);
            List<Long> times = randomTimes(rnd);
            long now = times.get(times.size() - 1) + (long) (rnd.nextDouble() * 100 * 24 * HOUR);
            List<RetentionExplainer.Snapshot> snaps = new ArrayList<>();
            List<RetentionPlanner.SnapshotState> states = new ArrayList<>();
            for (int i = 0; i < times.size(); i++) {
                long e = calc.expiryOf(p, times.get(i), times.subList(0, i));
                boolean held = rnd.nextInt(10) == 0;
                // sometimes the GC holds a later expiry, raised by an earlier, longer policy
                long fixed = rnd.nextInt(8) == 0 ? e + rnd.nextInt(30) * 24 * HOUR : e;
                snaps.add(new RetentionExplainer.Snapshot(times.get(i), held, fixed));
                states.add(new RetentionPlanner.SnapshotState(i + 1, fixed, held, rnd.nextBoolean()));
            }
            Set<Long> deleted = new HashSet<>(planner.plan(states, p.keepLast(), now).delete());
            List<RetentionExplainer.Verdict> v = explainer.explain(p, snaps, now);
            for (int i = 0; i < times.size(); i++) {
                RetentionExplainer.Verdict x = v.get(i);
                assertThat(x.kept()).as("policy %s, snapshot %d, now %d: %s", p, i, now, x).isEqualTo(!deleted.contains(i + 1L));
                assertThat(x.rule() != null).isEqualTo(x.kept());
            }
        }
    }

    @Test
    void explain_schedule_namesTheRuleAndItsSlot() {
        RetentionPolicy p = RetentionPolicy.parse("keep-last=2,daily=7,weekly=4");
        // Monday 2026-03-02 .. Sunday 2026-03-15, one snapshot a day at 10:00
        List<Long> times = new ArrayList<>();
        for (int d = 0; d < 14; d++) {
            times.add(t("2026-03-02T10:00:00Z") + d * 24 * HOUR);
        }
        long now = t("2026-03-15T12:00:00Z");
        List<RetentionExplainer.Verdict> v = explainer.explainTimes(p, times, now);
        assertThat(v.get(13).rule()).isEqualTo("keep-last 1 of 2");
        assertThat(v.get(12).rule()).isEqualTo("keep-last 2 of 2");
        assertThat(v.get(11).rule()).isEqualTo("daily 3 of 7"); // Friday 13th: today is 1, yesterday 2
        assertThat(v.get(10).rule()).isEqualTo("daily 4 of 7"); // Thursday 12th
        assertThat(v.get(7).rule()).isEqualTo("weekly 1 of 4"); // Monday 9th: daily until the 16th, weekly until April 6th
        assertThat(v.get(7).expiry()).isEqualTo(t("2026-04-06T00:00:00Z"));
        assertThat(v.get(6).kept()).isFalse(); // Sunday 8th: its day has left the seven (9th..15th)
        assertThat(v.get(6).rule()).isNull();
        assertThat(v.get(6).expiry()).isEqualTo(t("2026-03-15T00:00:00Z"));
        assertThat(v.get(0).rule()).isEqualTo("weekly 2 of 4");
    }

    @Test
    void explain_period_keptUntilCreationPlusPeriod_newestAlwaysKept() {
        RetentionPolicy p = RetentionPolicy.parse("30d");
        long a = t("2026-01-01T00:00:00Z");
        long b = t("2026-01-20T00:00:00Z");
        List<RetentionExplainer.Verdict> v = explainer.explainTimes(p, List.of(a, b), t("2026-02-15T00:00:00Z"));
        assertThat(v.get(0).kept()).isFalse();
        assertThat(v.get(0).expiry()).isEqualTo(t("2026-01-31T00:00:00Z"));
        assertThat(v.get(1).rule()).isEqualTo("period 30d");
        List<RetentionExplainer.Verdict> late = explainer.explainTimes(p, List.of(a, b), t("2026-06-01T00:00:00Z"));
        assertThat(late.get(1).kept()).isTrue();
        assertThat(late.get(1).rule()).isEqualTo("newest");
    }

    @Test
    void explain_heldOrRaisedByEarlierPolicy_saysSo() {
        RetentionPolicy p = RetentionPolicy.parse("1d");
        long a = t("2026-01-01T00:00:00Z");
        long b = t("2026-01-02T00:00:00Z");
        long c = t("2026-01-03T00:00:00Z");
        long now = t("2026-01-10T00:00:00Z");
        List<RetentionExplainer.Verdict> v = explainer.explain(p, List.of(
                new RetentionExplainer.Snapshot(a, true, RetentionExplainer.NO_FIXED_EXPIRY),
                new RetentionExplainer.Snapshot(b, false, t("2026-02-01T00:00:00Z")),
                RetentionExplainer.Snapshot.at(c)), now);
        assertThat(v.get(0).rule()).isEqualTo("hold");
        assertThat(v.get(1).rule()).isEqualTo("earlier policy");
        assertThat(v.get(1).expiry()).isEqualTo(t("2026-02-01T00:00:00Z"));
        assertThat(v.get(2).rule()).isEqualTo("newest");
    }

    private static RetentionPolicy randomPolicy(Random rnd) {
        if (rnd.nextInt(4) == 0) {
            return RetentionPolicy.parse((1 + rnd.nextInt(60)) + (rnd.nextBoolean() ? "d" : "h"));
        }
        int[] v = new int[5];
        do {
            for (int i = 0; i < 5; i++) {
                v[i] = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(i == 4 ? 3 : 10);
            }
        } while (v[0] + v[1] + v[2] + v[3] + v[4] == 0);
        return new RetentionPolicy.Schedule(v[0], v[1], v[2], v[3], v[4]);
    }

    /** Ascending times with gaps from minutes to months, some equal, crossing days, weeks, months and years. */
    private static List<Long> randomTimes(Random rnd) {
        int n = 1 + rnd.nextInt(40);
        List<Long> out = new ArrayList<>(n);
        long t = t("2025-12-20T00:00:00Z") + (long) (rnd.nextDouble() * 30 * 24 * HOUR);
        for (int i = 0; i < n; i++) {
            out.add(t);
            t += switch (rnd.nextInt(5)) {
                case 0 -> 0;
                case 1 -> rnd.nextInt(120) * 60_000L;
                case 2 -> rnd.nextInt(48) * HOUR;
                case 3 -> rnd.nextInt(14) * 24 * HOUR;
                default -> rnd.nextInt(90) * 24 * HOUR;
            };
        }
        return out;
    }
}
