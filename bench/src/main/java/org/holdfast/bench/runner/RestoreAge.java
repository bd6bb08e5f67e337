package org.holdfast.bench.runner;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Restore speed by snapshot age (issue 14): the newest snapshot's restore against the first's, each
 * with its MB/s and speed factor (MB restored per data-log region read), summed over the volumes
 * restored on that day. An older snapshot's blocks lie scattered among later days' logs as
 * later days rewrite their neighbours, and this shows what that costs.
 */
public final class RestoreAge {
    static final String PEER_SPEED_FACTOR = "n/a: a peer reports no data-log regions";

    private RestoreAge() {
    }

    /** One day's restores of one target, over all volumes. */
    private record Day(long bytes, double seconds, long regions) {
        Day plus(BenchResults.RestoreRow r) {
            // one restore without a region count makes the day's factor unknown
            return new Day(bytes + r.bytes(), seconds + r.seconds(), regions < 0 || r.regionsRead() < 0 ? -1 : regions + r.regionsRead());
        }

        Double mbps() {
            return seconds > 0 ? bytes / 1e6 / seconds : null;
        }
    }

    private static TreeMap<Integer, Day> days(BenchResults.TargetResult t) {
        TreeMap<Integer, Day> days = new TreeMap<>();
        for (BenchResults.RestoreRow r : t.restores) {
            days.put(r.day(), days.getOrDefault(r.day(), new Day(0, 0, 0)).plus(r));
        }
        return days;
    }

    /** The figures of one target; a map with only {@code status} if it restored fewer than two days. */
    public static Map<String, Object> of(BenchResults.TargetResult t) {
        TreeMap<Integer, Day> days = days(t);
        Map<String, Object> m = new LinkedHashMap<>();
        if (days.size() < 2) {
            m.put("status", "n/a: restores of " + days.size() + " day(s); the first and the newest snapshot are needed");
            return m;
        }
        boolean holdfast = HoldfastVariant.isHoldfast(t.name);
        List<Map<String, Object>> byDay = new ArrayList<>();
        for (Map.Entry<Integer, Day> e : days.entrySet()) {
            Day day = e.getValue();
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("day", e.getKey());
            d.put("bytes", day.bytes());
            d.put("seconds", day.seconds());
            d.put("MBps", day.mbps());
            d.put("speedFactor", !holdfast ? PEER_SPEED_FACTOR
                    : day.regions() < 0 ? TargetSummary.SPEED_FACTOR_NA : TargetSummary.speedFactor(day.bytes(), day.regions()));
            byDay.add(d);
        }
        Map<String, Object> first = byDay.get(0);
        Map<String, Object> newest = byDay.get(byDay.size() - 1);
        m.put("firstDay", first.get("day"));
        m.put("newestDay", newest.get("day"));
        m.put("firstMBps", first.get("MBps"));
        m.put("newestMBps", newest.get("MBps"));
        m.put("newestOverFirst", first.get("MBps") instanceof Double a && newest.get("MBps") instanceof Double b && a > 0 ? b / a : null);
        m.put("firstSpeedFactor", first.get("speedFactor"));
        m.put("newestSpeedFactor", newest.get("speedFactor"));
        m.put("byDay", byDay);
        return m;
    }

    /** MB/s of restoring the newest snapshot restored (all its volumes), or null if none was. */
    static Double newestMBps(BenchResults.TargetResult t) {
        TreeMap<Integer, Day> days = days(t);
        return days.isEmpty() ? null : days.lastEntry().getValue().mbps();
    }
}
