package org.holdfast.gc.sweep;

/** What {@link Sweeper#sweepUnmarked} tells its caller as it goes (progress, bytes, stopping). */
public interface UnmarkedSweepListener {
    /** The batch's victims, chosen and tombstoned, about to be reclaimed (their blocks still readable). */
    void freeing(long[] pbns);

    /**
     * A batch is done: its victims are reclaimed and marked FREED. A safe point: throwing here stops
     * the walk with nothing half done.
     */
    void batchDone(long examined, long freed);
}
