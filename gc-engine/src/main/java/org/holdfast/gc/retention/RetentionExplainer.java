package org.holdfast.gc.retention;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.temporal.IsoFields;
import java.util.ArrayList;
import java.util.List;

/**
 * Says, for each snapshot of a volume at time {@code now}, whether the GC keeps it, by which rule
 * ({@code keep-last 2 of 3}, {@code daily 5 of 7}, {@code weekly 3 of 4}, {@code monthly 1 of 12},
 * {@code yearly 1 of 2}, {@code period 30d}) and its fixed expiry. It answers the operator's
 * question "why is this snapshot still here, and until when", and the prune simulator's "what would
 * this policy keep".
 *
 * <p>Why a class of its own and not a flag on {@link ExpiryCalculator}: the calculator folds the
 * rules into one number (the maximum), which is all the GC needs; the explainer keeps each rule's
 * contribution apart to name the one that decides. It computes those contributions itself and its
 * tests hold it to the calculator (the maximum must be the calculator's expiry, for any times) and
 * to {@link RetentionPlanner} (kept exactly when the planner would not delete), so the simulator
 * can never promise what the GC does not do.
 *
 * <h2>Which rule is named</h2>
 * In this order: {@code hold} (a held snapshot is kept whatever its expiry); {@code keep-last r of K}
 * while the snapshot is among the newest K (r = 1 is the newest; the planner pins it past its
 * expiry); the rule whose expiry is the snapshot's, while that expiry has not passed ({@code daily
 * k of N}: its day is the k-th of the N days kept, today being 1; likewise weekly, monthly, yearly;
 * {@code keep-last estimate} when it is the keep-last estimate of {@link ExpiryCalculator};
 * {@code earlier policy} when the GC's recorded expiry is none of the current policy's rules', e.g.
 * raised by an earlier, longer policy);
 * {@code newest} (the newest snapshot is always kept). Otherwise the snapshot is not kept: the next
 * GC run deletes it. Ties between rules go to the shorter period (daily before weekly...).
 */
public final class RetentionExplainer {

    /**
     * One snapshot: its creation time (epoch ms), whether a hold or lock keeps it, and the expiry the
     * GC has recorded for it ({@link #NO_FIXED_EXPIRY} when unknown or in a simulation). A recorded
     * expiry wins over the policy's: it is what the GC deletes by.
     */
    public record Snapshot(long createdAt, boolean held, long fixedExpiry) {
        /** A snapshot as the simulator sees it: no hold, no recorded expiry. */
        public static Snapshot at(long createdAt) {
            return new Snapshot(createdAt, false, NO_FIXED_EXPIRY);
        }
    }

    /** No recorded expiry: the explainer uses the policy's. */
    public static final long NO_FIXED_EXPIRY = Long.MIN_VALUE;

    /**
     * The answer for one snapshot: kept or not, the rule that keeps it (null when not kept), and its
     * expiry (epoch ms): the policy's, exactly as {@link ExpiryCalculator} computes it, or the GC's
     * recorded one when there is one.
     */
    public record Verdict(long createdAt, boolean kept, String rule, long expiry) {
    }

    /** Explains {@code createdAt} times (ascending) as a simulation: no holds, no recorded expiries. */
    public List<Verdict> explainTimes(RetentionPolicy policy, List<Long> createdAt, long now) {
        List<Snapshot> s = new ArrayList<>(createdAt.size());
        for (long t : createdAt) {
            s.add(Snapshot.at(t));
        }
        return explain(policy, s, now);
    }

    /**
     * One verdict per snapshot, in the same order. {@code snapshots} must be the volume's retained
     * snapshots in ascending creation order (the order their expiries were computed in).
     */
    public List<Verdict> explain(RetentionPolicy policy, List<Snapshot> snapshots, long now) {
        int n = snapshots.size();
        int keepLast = policy.keepLast();
        int window = Math.max(1, keepLast); // as RetentionPlanner: the newest is always kept
        List<Verdict> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Snapshot s = snapshots.get(i);
            Terms terms = terms(policy, snapshots, i);
            // the GC's recorded expiry is the truth for a real snapshot: it was fixed when the snapshot
            // was taken (or raised by a later policy), and the planner deletes by it
            long expiry = s.fixedExpiry() == NO_FIXED_EXPIRY ? terms.max() : s.fixedExpiry();
            boolean inWindow = i >= n - window;
            String rule;
            if (s.held()) {
                rule = "hold";
            } else if (inWindow && keepLast > 0) {
                rule = "keep-last " + (n - i) + " of " + keepLast;
            } else if (expiry >= now && expiry > s.createdAt()) {
                String r = terms.rule(policy, expiry, s.createdAt(), now);
                rule = r == null ? "earlier policy" : r;
            } else if (inWindow) {
                rule = "newest";
            } else if (expiry >= now) {
                rule = "expiry"; // taken at now, with no rule beyond its creation: kept until the instant passes
            } else {
                rule = null;
            }
            out.add(new Verdict(s.createdAt(), rule != null, rule, expiry));
        }
        return out;
    }

    /** Each rule's contribution to one snapshot's expiry; {@code Long.MIN_VALUE} where the rule does not apply. */
    private record Terms(long created, long period, long daily, long weekly, long monthly, long yearly, long keepLast) {
        long max() {
            return Math.max(created, Math.max(period, Math.max(Math.max(daily, weekly),
                    Math.max(Math.max(monthly, yearly), keepLast))));
        }

        /** The rule whose expiry is {@code e}, or null if none is (an expiry an earlier policy gave). */
        String rule(RetentionPolicy policy, long e, long createdAt, long now) {
            if (policy instanceof RetentionPolicy.Period) {
                return period == e ? "period " + policy : null;
            }
            RetentionPolicy.Schedule s = (RetentionPolicy.Schedule) policy;
            LocalDate day = date(createdAt);
            LocalDate today = date(now);
            if (daily == e) {
                return "daily " + rank(ChronoUnit.DAYS.between(day, today), s.daily()) + " of " + s.daily();
            }
            if (weekly == e) {
                long weeks = ChronoUnit.WEEKS.between(day.with(DayOfWeek.MONDAY), today.with(DayOfWeek.MONDAY));
                return "weekly " + rank(weeks, s.weekly()) + " of " + s.weekly();
            }
            if (monthly == e) {
                long months = (today.getYear() * 12L + today.getMonthValue()) - (day.getYear() * 12L + day.getMonthValue());
                return "monthly " + rank(months, s.monthly()) + " of " + s.monthly();
            }
            if (yearly == e) {
                return "yearly " + rank(today.getYear() - (long) day.getYear(), s.yearly()) + " of " + s.yearly();
            }
            return keepLast == e ? "keep-last estimate" : null;
        }

        /** 1 for the current period; clamped, because at the exact instant of expiry the slot is still N. */
        private static long rank(long periodsAgo, int n) {
            return Math.max(1, Math.min(n, periodsAgo + 1));
        }
    }

    private static Terms terms(RetentionPolicy policy, List<Snapshot> all, int i) {
        long created = all.get(i).createdAt();
        long none = Long.MIN_VALUE;
        if (policy instanceof RetentionPolicy.Period p) {
            return new Terms(created, saturatedAdd(created, p.keep().toMillis()), none, none, none, none, none);
        }
        RetentionPolicy.Schedule s = (RetentionPolicy.Schedule) policy;
        LocalDate day = date(created);
        LocalDate prev = i == 0 ? null : date(all.get(i - 1).createdAt());
        boolean firstOfDay = prev == null || !prev.equals(day);
        boolean firstOfWeek = prev == null || prev.get(IsoFields.WEEK_BASED_YEAR) != day.get(IsoFields.WEEK_BASED_YEAR)
                || prev.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR) != day.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR);
        boolean firstOfMonth = prev == null || prev.getYear() != day.getYear() || prev.getMonthValue() != day.getMonthValue();
        boolean firstOfYear = prev == null || prev.getYear() != day.getYear();
        long daily = s.daily() > 0 && firstOfDay ? millis(day.plusDays(s.daily())) : none;
        long weekly = s.weekly() > 0 && firstOfWeek ? millis(day.with(DayOfWeek.MONDAY).plusWeeks(s.weekly())) : none;
        long monthly = s.monthly() > 0 && firstOfMonth ? millis(day.withDayOfMonth(1).plusMonths(s.monthly())) : none;
        long yearly = s.yearly() > 0 && firstOfYear ? millis(day.withDayOfYear(1).plusYears(s.yearly())) : none;
        long keepLast = none;
        if (s.keepLast() > 0 && i > 0) {
            // when the K-th successor is expected: K times the longest of the last K intervals
            long longest = 0;
            long later = created;
            for (int j = i - 1; j >= Math.max(0, i - s.keepLast()); j--) {
                long t = all.get(j).createdAt();
                longest = Math.max(longest, later - t);
                later = t;
            }
            keepLast = saturatedAdd(created, Math.multiplyHigh(longest, s.keepLast()) != 0
                    ? Long.MAX_VALUE / 2 : longest * s.keepLast());
        }
        return new Terms(created, none, daily, weekly, monthly, yearly, keepLast);
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
