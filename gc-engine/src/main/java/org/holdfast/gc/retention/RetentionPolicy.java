package org.holdfast.gc.retention;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long a volume's snapshots are kept. Two forms, parsed from and printed as strings:
 * <ul>
 * <li>{@link Period}: every snapshot is kept a fixed time: {@code 30d}, {@code 12h}, {@code 4w},
 *     {@code 1y} (365 days).</li>
 * <li>{@link Schedule}: grandfather-father-son: {@code keep-last=3,daily=7,weekly=4,monthly=12,yearly=2}
 *     (any subset, at least one positive).</li>
 * </ul>
 */
public sealed interface RetentionPolicy permits RetentionPolicy.Period, RetentionPolicy.Schedule {
    /** Longest period accepted (100 years): larger values are a typo, not a policy. */
    Duration MAX_PERIOD = Duration.ofDays(36_500);
    /** Largest count accepted in a schedule. */
    int MAX_COUNT = 10_000;

    /** Keep every snapshot for {@code keep}. */
    record Period(Duration keep) implements RetentionPolicy {
        public Period {
            if (keep == null || keep.compareTo(Duration.ofHours(1)) < 0 || keep.compareTo(MAX_PERIOD) > 0) {
                // in the policy syntax, never Java's (PT876024H)
                throw new IllegalArgumentException("retention period must be between 1h and 36500d, got "
                        + (keep == null ? "none" : keep.toHours() % 24 == 0 ? keep.toDays() + "d" : keep.toHours() + "h"));
            }
        }

        @Override
        public String toString() {
            long h = keep.toHours();
            if (h % 24 != 0) {
                return h + "h";
            }
            long d = h / 24;
            return d % 7 == 0 && d % 365 != 0 ? (d / 7) + "w" : d % 365 == 0 ? (d / 365) + "y" : d + "d";
        }
    }

    /**
     * Keep the newest {@code keepLast}, the first snapshot of each of the last {@code daily} days,
     * {@code weekly} ISO weeks, {@code monthly} months and {@code yearly} years (UTC).
     */
    record Schedule(int keepLast, int daily, int weekly, int monthly, int yearly) implements RetentionPolicy {
        public Schedule {
            for (int v : new int[] {keepLast, daily, weekly, monthly, yearly}) {
                if (v < 0 || v > MAX_COUNT) {
                    throw new IllegalArgumentException("schedule counts must be 0.." + MAX_COUNT + ": " + v);
                }
            }
            if (keepLast + daily + weekly + monthly + yearly == 0) {
                throw new IllegalArgumentException("a schedule must keep something");
            }
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            append(sb, "keep-last", keepLast);
            append(sb, "daily", daily);
            append(sb, "weekly", weekly);
            append(sb, "monthly", monthly);
            append(sb, "yearly", yearly);
            return sb.toString();
        }

        private static void append(StringBuilder sb, String k, int v) {
            if (v > 0) {
                sb.append(sb.isEmpty() ? "" : ",").append(k).append('=').append(v);
            }
        }
    }

    /** Snapshots kept by keep-last (0 for a period policy). */
    default int keepLast() {
        return this instanceof Schedule s ? s.keepLast() : 0;
    }

    Pattern PERIOD = Pattern.compile("(\\d{1,6})\\s*([hdwy])");
    Pattern PAIR = Pattern.compile("(keep-last|daily|weekly|monthly|yearly)=(\\d{1,5})");

    /** Parses {@code 30d} or {@code keep-last=3,daily=7,...}; a clear error for anything else. */
    static RetentionPolicy parse(String text) {
        if (text == null || text.isBlank() || text.length() > 200) {
            throw new IllegalArgumentException("retention policy must be like '30d' or 'keep-last=3,daily=7'");
        }
        String t = text.trim().toLowerCase(Locale.ROOT);
        Matcher m = PERIOD.matcher(t);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            Duration d = switch (m.group(2)) {
                case "h" -> Duration.ofHours(n);
                case "d" -> Duration.ofDays(n);
                case "w" -> Duration.ofDays(7 * n);
                default -> Duration.ofDays(365 * n);
            };
            return new Period(d);
        }
        int[] v = new int[5];
        boolean[] seen = new boolean[5];
        for (String part : t.split(",")) {
            Matcher p = PAIR.matcher(part.trim());
            if (!p.matches()) {
                throw new IllegalArgumentException("cannot parse retention '" + text + "' at '" + part.trim()
                        + "': use '30d' or keys keep-last, daily, weekly, monthly, yearly with counts");
            }
            int i = switch (p.group(1)) {
                case "keep-last" -> 0;
                case "daily" -> 1;
                case "weekly" -> 2;
                case "monthly" -> 3;
                default -> 4;
            };
            if (seen[i]) {
                throw new IllegalArgumentException("retention key '" + p.group(1) + "' given twice");
            }
            seen[i] = true;
            v[i] = Integer.parseInt(p.group(2));
        }
        return new Schedule(v[0], v[1], v[2], v[3], v[4]);
    }
}
