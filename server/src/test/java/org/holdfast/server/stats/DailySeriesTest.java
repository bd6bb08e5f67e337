package org.holdfast.server.stats;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.server.catalog.DailyStatsStore;
import org.holdfast.server.stats.TransferRates.Direction;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The daily series on a real catalog: one record per day, counts across a day's end, a restart and the bound. */
class DailySeriesTest {
    private static final LocalDate DAY = LocalDate.of(2026, 3, 10);

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(DAY.atTime(23, 0).toInstant(ZoneOffset.UTC).toEpochMilli());
    private final Clock clock = new Clock() {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(now.get());
        }
    };

    private static StatsReport report(long stored, long logical, long snapshots) {
        return new StatsReport(0, 0, null, new StatsReport.Stored(1, stored, stored, stored),
                new StatsReport.Logical(1, snapshots, logical, logical), (double) logical / stored, 1, 1, null, null, List.of());
    }

    @Test
    void update_acrossMidnightAndRestart_oneRecordPerDayAndCountsContinue() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            DailyStatsStore store = new DailyStatsStore(db);
            store.put(new DailyStatsStore.Day(DAY.minusDays(DailySeries.KEEP_DAYS), 1, 1, 1, 1, 1, 1, 1)); // past the bound
            TransferRates rates = new TransferRates(now::get);
            DailySeries s = new DailySeries(store, rates, clock);
            rates.record(Direction.INGEST, "v", 1000); // before the first update: still today's
            s.update(report(100, 200, 1));
            rates.record(Direction.INGEST, "v", 500);
            s.update(report(150, 400, 2));
            now.addAndGet(2 * 3_600_000L); // past midnight
            rates.record(Direction.RESTORE, "v", 70);
            s.update(report(150, 400, 2));
            rates.record(Direction.INGEST, "v", 30);
            s.update(report(160, 600, 3));

            List<DailyStatsStore.Day> days = s.range(DAY.minusYears(5), DAY.plusDays(1));
            assertThat(days).extracting(DailyStatsStore.Day::day).as("the old record was pruned").containsExactly(DAY, DAY.plusDays(1));
            assertThat(days.get(0).bytesIngested()).isEqualTo(1500);
            assertThat(days.get(0).bytesRestored()).as("moved after the last update of the day: counted to it").isEqualTo(70);
            assertThat(days.get(0).snapshots()).isEqualTo(2);
            assertThat(days.get(1).bytesIngested()).isEqualTo(30);
            assertThat(days.get(1).bytesRestored()).isZero();
            assertThat(days.get(1).logicalBytes()).isEqualTo(600);
            assertThat(days.get(1).dedupRatio()).isEqualTo(600.0 / 160);

            // a restart the same day: counting goes on from the stored record
            TransferRates after = new TransferRates(now::get);
            DailySeries s2 = new DailySeries(store, after, clock);
            after.record(Direction.INGEST, "v", 5);
            s2.update(report(160, 600, 3));
            assertThat(s2.range(DAY.plusDays(1), DAY.plusDays(1)).get(0).bytesIngested()).isEqualTo(35);
        }
    }
}
