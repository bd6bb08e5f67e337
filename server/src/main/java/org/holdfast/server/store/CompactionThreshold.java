package org.holdfast.server.store;

import java.util.function.DoubleFunction;

/**
 * The live share below which {@link Compactor} rewrites a sealed data log: a number in 0..1 (0 turns
 * compaction off, 1 rewrites every log with a dead byte). One check for every place that takes one
 * (the compactor, the GC settings, a worker's settings, reclaim-now's request), each with its own words.
 */
public final class CompactionThreshold {
    private CompactionThreshold() {
    }

    /**
     * Returns {@code share} if it lies in 0..1; else (NaN included) throws an {@link IllegalArgumentException}
     * whose message is {@code refusal} applied to the share, so each caller names its setting and says what
     * happens next.
     */
    public static double check(double share, DoubleFunction<String> refusal) {
        if (!(share >= 0 && share <= 1)) {
            throw new IllegalArgumentException(refusal.apply(share));
        }
        return share;
    }
}
