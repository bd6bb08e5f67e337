package org.holdfast.gc.retention;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.IsoFields;
import java.util.List;

/**
 * Fixes a snapshot's expiry when it is taken. The GC needs this: an expiry raised into the GMA can
 * never be lowered cheaply, so it must be known at dereference time (thesis 5.5).
 *
 * <h2>Rules (UTC calendar)</h2>
 * <ul>
 * <li>Period {@code P}: created + P.</li>
 * <li>Schedule: the maximum of
 *   <ul>
 *   <li>daily=N, if the snapshot is the first of its day: start of (its day + N days);</li>
 *   <li>weekly=N, if first of its ISO week: start of (its week's Monday + N weeks);</li>
 *   <li>monthly=N, if first of its month: first day of (its month + N months);</li>
 *   <li>yearly=N, if first of its year: 1 January of (its year + N);</li>
 *   <li>keep-last=K: an estimate, created + K × (longest of the last K intervals between
 *       snapshots), which is when the K-th successor is expected;</li>
 *   <li>and the creation time itself.</li>
 *   </ul></li>
 * </ul>
 *
 * <p>Why "first of the period" and not the usual "last": whether a snapshot is the first of its day,
 * week, month or year is known the moment it is taken (no earlier snapshot of that period
 * exists), while "last" is only known when the period is over. With "first", at any time the
 * schedule keeps N dailies (days D-N+1..D) and so on, and nothing needs to change later.
 *
 * <p>Keep-last is the one rule that depends on the future (the K-th successor may never come if
 * backups stop). The estimate makes the common case free; the guarantee comes from
 * {@link RetentionPlanner}, which pins a snapshot still among the newest K before its fixed expiry
 * passes and unpins it once it falls out. So keep-last is exact and the GMA never needs lowering.
 */
public final class ExpiryCalculator {

    /**
     * Expiry of a snapshot created at {@code created} under {@code policy}, given the creation times
     * of the volume's earlier snapshots ({@code earlier}, oldest first; only the tail is used).
     */
    public long expiryOf(RetentionPolicy policy, long created, List<Long> earlier) {
        if (policy instanceof RetentionPolicy.Period p) {
            return saturatedAdd(created, p.keep().toMillis());
        }
        RetentionPolicy.Schedule s = (RetentionPolicy.Schedule) policy;
        Long prev = earlier.isEmpty() ? null : earlier.get(earlier.size() - 1);
        LocalDate day = date(created);
        LocalDate prevDay = prev == null ? null : date(prev);
        long expiry = created;
        if (s.daily() > 0 && (prevDay == null || !prevDay.equals(day))) {
            expiry = Math.max(expiry, millis(day.plusDays(s.daily())));
        }
        if (s.weekly() > 0 && (prevDay == null || !sameIsoWeek(prevDay, day))) {
            LocalDate monday = day.with(DayOfWeek.MONDAY);
            expiry = Math.max(expiry, millis(monday.plusWeeks(s.weekly())));
        }
        if (s.monthly() > 0 && (prevDay == null || prevDay.getYear() != day.getYear()
                || prevDay.getMonthValue() != day.getMonthValue())) {
            expiry = Math.max(expiry, millis(day.withDayOfMonth(1).plusMonths(s.monthly())));
        }
        if (s.yearly() > 0 && (prevDay == null || prevDay.getYear() != day.getYear())) {
            expiry = Math.max(expiry, millis(day.withDayOfYear(1).plusYears(s.yearly())));
        }
        if (s.keepLast() > 0 && prev != null) {
            long longest = 0;
            long later = created;
            int n = Math.min(s.keepLast(), earlier.size());
            for (int i = 0; i < n; i++) {
                long t = earlier.get(earlier.size() - 1 - i);
                longest = Math.max(longest, later - t);
                later = t;
            }
            expiry = Math.max(expiry, saturatedAdd(created, Math.multiplyHigh(longest, s.keepLast()) != 0
                    ? Long.MAX_VALUE / 2 : longest * s.keepLast()));
        }
        return expiry;
    }

    private static boolean sameIsoWeek(LocalDate a, LocalDate b) {
        return a.get(IsoFields.WEEK_BASED_YEAR) == b.get(IsoFields.WEEK_BASED_YEAR)
                && a.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR) == b.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR);
    }

    private static LocalDate date(long millis) {
        return Instant.ofEpochMilli(millis).atZone(ZoneOffset.UTC).toLocalDate();
    }

    private static long millis(LocalDate d) {
        return d.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
