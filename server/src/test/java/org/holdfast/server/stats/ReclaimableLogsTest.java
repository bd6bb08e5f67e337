package org.holdfast.server.stats;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import org.holdfast.server.gc.StoreSurvey;
import org.junit.jupiter.api.Test;

/** The per-log rule of {@code reclaimable.nowBytes}: only logs compaction will rewrite count. */
class ReclaimableLogsTest {

    private static StoreSurvey.Result survey(Map<Integer, StoreSurvey.LogBytes> byLog) {
        return new StoreSurvey.Result(0, 0, 0, 0, 0, 0, new TreeMap<>(), 0, 0, new TreeMap<>(byLog));
    }

    @Test
    void of_mostlyLiveLog_countsNothingAndSparseLogCountsItsDeadAndExpiredBytes() {
        StoreSurvey.Result s = survey(Map.of(
                1, new StoreSurvey.LogBytes(600, 0),     // 60 % live: stays as it is
                2, new StoreSurvey.LogBytes(300, 0),     // 30 % live: rewritten, 700 dead bytes back
                3, new StoreSurvey.LogBytes(700, 400))); // 70 % live, but 30 % once the sweep freed the expired
        Map<Integer, Long> records = Map.of(1, 1000L, 2, 1000L, 3, 1000L);

        ReclaimableLogs r = ReclaimableLogs.of(s, records, records, 0.5);

        assertThat(r.compactableBytes()).isEqualTo(700 + 300);
        assertThat(r.nowBytes()).isEqualTo(700 + 700);
    }

    @Test
    void of_logCompactedOrDeletedSinceTheSurvey_countsOnlyWhatItStillHolds() {
        StoreSurvey.Result s = survey(Map.of(2, new StoreSurvey.LogBytes(300, 0)));
        assertThat(ReclaimableLogs.of(s, Map.of(2, 1000L, 4, 500L), Map.of(2, 300L), 0.5).nowBytes()).isZero();
    }

    @Test
    void of_compactionOff_countsNothing() {
        StoreSurvey.Result s = survey(Map.of(1, new StoreSurvey.LogBytes(0, 0)));
        assertThat(ReclaimableLogs.of(s, Map.of(1, 1000L), Map.of(1, 1000L), 0).nowBytes()).isZero();
    }
}
