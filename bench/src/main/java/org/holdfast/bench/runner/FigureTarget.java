package org.holdfast.bench.runner;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Issue 14's targets, one per figure, in one place: each summary that checks a figure takes its
 * threshold, its direction and its label from here.
 */
public enum FigureTarget {
    FULL_BACKUP("full backup vs the faster peer", 1.5, 2.0, false),
    INCREMENTAL_BACKUP("incremental vs the faster peer", 2.0, null, false),
    RESTORE("restore of the newest snapshot vs the faster peer", 2.0, null, false),
    STORED_BYTES("stored bytes vs the smaller peer", 0.8, null, true),
    DEDUP_EFFICIENCY("dedup efficiency vs exact", 0.99, null, false),
    GC_BOOKKEEPING("GC bookkeeping on/off", 0.95, null, false);

    private final String label;
    private final double threshold;
    private final Double goal;
    private final boolean atMost;

    FigureTarget(String label, double threshold, Double goal, boolean atMost) {
        this.label = label;
        this.threshold = threshold;
        this.goal = goal;
        this.atMost = atMost;
    }

    /** What the figure is, as the report's column header says. */
    public String label() {
        return label;
    }

    /** The value the figure must reach (or stay under, for {@link #STORED_BYTES}). */
    public double threshold() {
        return threshold;
    }

    /** The target in words, e.g. {@code >= 1.5 (goal 2)} or {@code <= 0.8}. */
    public String text() {
        return (atMost ? "<= " : ">= ") + plain(threshold) + (goal == null ? "" : " (goal " + plain(goal) + ")");
    }

    /** Whether {@code value} meets the target. */
    public boolean met(double value) {
        return atMost ? value <= threshold : value >= threshold;
    }

    /**
     * The JSON entry of one checked figure: {@code value}, the target it compared with ({@code against}:
     * a peer or a Holdfast target's name), the threshold, the target in words and whether it is met.
     */
    public Map<String, Object> check(double value, String against) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("against", against);
        m.put("ratio", value);
        m.put("target", threshold);
        if (goal != null) {
            m.put("goal", goal);
        }
        m.put("targetText", text());
        m.put("met", met(value));
        return m;
    }

    private static String plain(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
    }
}
