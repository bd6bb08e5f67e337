package org.holdfast.server.stats;

import java.util.Map;
import org.holdfast.server.gc.StoreSurvey;

/**
 * What the next GC run gives back to the file system, log by log, by the rule compaction applies:
 * a data log is rewritten (or deleted) when its live share, once the sweep has freed its expired
 * blocks, is below the compaction threshold; the active log too, which compaction seals first. Dead
 * bytes in a log above the threshold stay until more of it dies, so they are not counted as
 * reclaimable now.
 *
 * @param nowBytes bytes the next GC run returns: dead and expired record bytes of the logs it will rewrite
 * @param compactableBytes of those, the records already dead (no location)
 */
record ReclaimableLogs(long nowBytes, long compactableBytes) {

    /**
     * Applies the rule to {@code survey}'s per-log live and expired bytes. {@code recordsThen}: each
     * log's record bytes (size less header) measured just before the survey; {@code recordsNow}:
     * measured now (a log compacted or deleted since counts only what it still holds).
     */
    static ReclaimableLogs of(StoreSurvey.Result survey, Map<Integer, Long> recordsThen, Map<Integer, Long> recordsNow,
                              double threshold) {
        if (threshold <= 0) {
            return new ReclaimableLogs(0, 0); // compaction off: nothing goes back to the file system
        }
        long now = 0;
        long dead = 0;
        for (Map.Entry<Integer, Long> e : recordsThen.entrySet()) {
            long records = Math.min(e.getValue(), recordsNow.getOrDefault(e.getKey(), 0L));
            if (records <= 0) {
                continue;
            }
            StoreSurvey.LogBytes b = survey.byLog().getOrDefault(e.getKey(), new StoreSurvey.LogBytes(0, 0));
            long liveAfterSweep = b.liveBytes() - b.expiredBytes();
            if ((double) liveAfterSweep / records < threshold) {
                now += Math.max(0, records - liveAfterSweep);
                dead += Math.max(0, records - b.liveBytes());
            }
        }
        return new ReclaimableLogs(now, dead);
    }
}
