package org.holdfast.gc.retention;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExpiryCalculatorTest {
    private final ExpiryCalculator calc = new ExpiryCalculator();

    private static long t(String iso) {
        return Instant.parse(iso).toEpochMilli();
    }

    @Test
    void period_expiryIsCreationPlusPeriod() {
        long c = t("2026-03-10T15:00:00Z");
        assertThat(calc.expiryOf(RetentionPolicy.parse("30d"), c, List.of(c - 1000)))
                .isEqualTo(t("2026-04-09T15:00:00Z"));
    }

    @Test
    void schedule_firstOfDay_keptNDays_laterSameDayNot() {
        RetentionPolicy p = RetentionPolicy.parse("daily=7");
        long first = t("2026-03-10T01:00:00Z");
        long second = t("2026-03-10T13:00:00Z");
        assertThat(calc.expiryOf(p, first, List.of(t("2026-03-09T23:00:00Z")))).isEqualTo(t("2026-03-17T00:00:00Z"));
        assertThat(calc.expiryOf(p, second, List.of(first))).isEqualTo(second);
    }

    @Test
    void schedule_firstOfWeekMonthYear_eachRuleApplies() {
        RetentionPolicy p = RetentionPolicy.parse("daily=7,weekly=4,monthly=12,yearly=2");
        // Wednesday 2026-04-01: first of month; previous snapshot Tuesday 2026-03-31 (same ISO week)
        long c = t("2026-04-01T02:00:00Z");
        assertThat(calc.expiryOf(p, c, List.of(t("2026-03-31T02:00:00Z")))).isEqualTo(t("2027-04-01T00:00:00Z"));
        // Monday 2026-03-30, previous Sunday: first of ISO week, not of month
        long m = t("2026-03-30T02:00:00Z");
        assertThat(calc.expiryOf(p, m, List.of(t("2026-03-29T02:00:00Z")))).isEqualTo(t("2026-04-27T00:00:00Z"));
        // 2027-01-01, previous 2026-12-31: first of year
        long y = t("2027-01-01T05:00:00Z");
        assertThat(calc.expiryOf(p, y, List.of(t("2026-12-31T05:00:00Z")))).isEqualTo(t("2029-01-01T00:00:00Z"));
        // very first snapshot of a volume: first of everything
        assertThat(calc.expiryOf(p, y, List.of())).isEqualTo(t("2029-01-01T00:00:00Z"));
    }

    @Test
    void schedule_dailyWindow_keepsExactlyNDailiesAtAnyTime() {
        RetentionPolicy p = RetentionPolicy.parse("daily=7");
        List<Long> times = new ArrayList<>();
        List<Long> expiries = new ArrayList<>();
        long start = t("2026-01-01T00:00:00Z");
        for (int h = 0; h < 24 * 40; h += 6) {
            long c = start + h * 3_600_000L;
            expiries.add(calc.expiryOf(p, c, times));
            times.add(c);
        }
        long now = t("2026-01-30T12:00:00Z");
        long alive = 0;
        for (int i = 0; i < times.size(); i++) {
            if (times.get(i) <= now && expiries.get(i) > now) {
                alive++;
            }
        }
        // days 24..30: a later snapshot of a day is not a daily and expires when taken
        assertThat(alive).isEqualTo(7);
    }

    @Test
    void keepLast_estimateCoversTheNextKIntervals() {
        RetentionPolicy p = RetentionPolicy.parse("keep-last=3");
        long h = 3_600_000L;
        long c = 10 * h;
        List<Long> earlier = List.of(4 * h, 6 * h, 9 * h); // intervals 2h, 3h, 1h
        assertThat(calc.expiryOf(p, c, earlier)).isEqualTo(c + 3 * 3 * h);
        assertThat(calc.expiryOf(p, c, List.of())).isEqualTo(c);
    }
}
