package org.holdfast.client.daemon;

import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.BitSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A cron expression: when a volume's backup is due (docs/agent.md, "Schedules").
 *
 * <p>Five fields {@code MINUTE HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK} as in crontab(5), or six with a
 * leading {@code SECOND} field (for tests and short intervals). Each field is {@code *}, a number, a
 * range {@code a-b}, a list {@code a,b-c}, and any of these with a step {@code /n} ({@code a/n} means
 * {@code a-MAX/n}). Months and weekdays also take English names ({@code JAN}, {@code MON}); Sunday is
 * 0 or 7. As in Vixie cron, when both day fields are restricted a day matches either of them.
 * {@code @hourly}, {@code @daily} ({@code @midnight}), {@code @weekly}, {@code @monthly} and
 * {@code @yearly} ({@code @annually}) are the usual shorthands. Times are in the given zone.
 *
 * <p>Written here rather than taken from a library: the agent needs forty lines of it and no
 * dependency on a scheduler framework.
 */
public final class CronSchedule {
    /** How far ahead {@link #next} looks before deciding the expression never fires (29 February needs 4 years, 8 at worst). */
    private static final int HORIZON_YEARS = 9;

    private static final Map<String, String> MACROS = Map.of(
            "@hourly", "0 * * * *", "@daily", "0 0 * * *", "@midnight", "0 0 * * *", "@weekly", "0 0 * * 0",
            "@monthly", "0 0 1 * *", "@yearly", "0 0 1 1 *", "@annually", "0 0 1 1 *");
    private static final String[] MONTHS = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
    private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

    private final String expression;
    private final BitSet seconds;
    private final BitSet minutes;
    private final BitSet hours;
    private final BitSet daysOfMonth;
    private final BitSet months;
    private final BitSet daysOfWeek;
    private final boolean domRestricted;
    private final boolean dowRestricted;

    private CronSchedule(String expression, String[] f) {
        this.expression = expression;
        this.seconds = field("second", f[0], 0, 59, null);
        this.minutes = field("minute", f[1], 0, 59, null);
        this.hours = field("hour", f[2], 0, 23, null);
        this.daysOfMonth = field("day-of-month", f[3], 1, 31, null);
        this.months = field("month", f[4], 1, 12, MONTHS);
        BitSet dow = field("day-of-week", f[5], 0, 7, DAYS);
        if (dow.get(7)) {
            dow.set(0); // 7 is Sunday too
        }
        this.daysOfWeek = dow;
        this.domRestricted = !isStar(f[3]);
        this.dowRestricted = !isStar(f[5]);
    }

    /**
     * Parses an expression; an {@link IllegalArgumentException} names the field and why it is wrong.
     */
    public static CronSchedule parse(String expression) {
        if (expression == null || expression.isBlank()) {
            throw new IllegalArgumentException("empty cron expression");
        }
        String text = expression.strip();
        String expanded = text.startsWith("@") ? MACROS.get(text.toLowerCase(Locale.ROOT)) : text;
        if (expanded == null) {
            throw new IllegalArgumentException("unknown shorthand '" + text + "' (known: @hourly, @daily, @weekly, @monthly, @yearly)");
        }
        String[] parts = expanded.split("\\s+");
        String[] six;
        if (parts.length == 5) {
            six = new String[] {"0", parts[0], parts[1], parts[2], parts[3], parts[4]};
        } else if (parts.length == 6) {
            six = parts;
        } else {
            throw new IllegalArgumentException("expected 5 fields (minute hour day-of-month month day-of-week) or 6"
                    + " (second first), found " + parts.length + " in '" + text + "'");
        }
        CronSchedule s = new CronSchedule(text, six);
        if (s.next(ZonedDateTime.now()).isEmpty()) {
            throw new IllegalArgumentException("'" + text + "' never fires (no such date in the next " + HORIZON_YEARS + " years)");
        }
        return s;
    }

    /** The first time strictly after {@code after} (whole seconds) that matches, or empty if none within the horizon. */
    public Optional<ZonedDateTime> next(ZonedDateTime after) {
        ZonedDateTime t = after.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
        int lastYear = after.getYear() + HORIZON_YEARS;
        while (t.getYear() <= lastYear) {
            if (!months.get(t.getMonthValue())) {
                t = t.truncatedTo(ChronoUnit.DAYS).withDayOfMonth(1).plusMonths(1);
            } else if (!dayMatches(t)) {
                t = t.truncatedTo(ChronoUnit.DAYS).plusDays(1);
            } else if (!hours.get(t.getHour())) {
                t = t.truncatedTo(ChronoUnit.HOURS).plusHours(1);
            } else if (!minutes.get(t.getMinute())) {
                t = t.truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
            } else if (!seconds.get(t.getSecond())) {
                t = t.plusSeconds(1);
            } else {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    private boolean dayMatches(ZonedDateTime t) {
        boolean dom = daysOfMonth.get(t.getDayOfMonth());
        boolean dow = daysOfWeek.get(t.getDayOfWeek().getValue() % 7);
        if (domRestricted && dowRestricted) {
            return dom || dow;
        }
        return dom && dow;
    }

    private static boolean isStar(String f) {
        return f.equals("*") || f.equals("?");
    }

    private static BitSet field(String name, String text, int min, int max, String[] names) {
        BitSet bits = new BitSet(max + 1);
        for (String part : text.split(",", -1)) {
            String range = part;
            int step = 1;
            int slash = part.indexOf('/');
            if (slash >= 0) {
                range = part.substring(0, slash);
                step = number(name, part.substring(slash + 1), 1, max - min + 1, null, text);
            }
            int lo;
            int hi;
            if (isStar(range)) {
                lo = min;
                hi = max;
            } else if (range.indexOf('-') > 0) {
                int dash = range.indexOf('-');
                lo = number(name, range.substring(0, dash), min, max, names, text);
                hi = number(name, range.substring(dash + 1), min, max, names, text);
                if (hi < lo) {
                    throw new IllegalArgumentException(name + " field '" + text + "': range " + range + " runs backwards");
                }
            } else {
                lo = number(name, range, min, max, names, text);
                hi = slash >= 0 ? max : lo;
            }
            for (int v = lo; v <= hi; v += step) {
                bits.set(v);
            }
        }
        return bits;
    }

    private static int number(String name, String s, int min, int max, String[] names, String whole) {
        if (names != null) {
            for (int i = 0; i < names.length; i++) {
                if (names[i].equalsIgnoreCase(s)) {
                    return i + min;
                }
            }
        }
        int v;
        try {
            v = Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " field '" + whole + "': '" + s + "' is not a number"
                    + (names == null ? "" : " or a name like " + names[0]));
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " field '" + whole + "': " + v + " is out of range " + min + "-" + max);
        }
        return v;
    }

    @Override
    public String toString() {
        return expression;
    }
}
