package org.holdfast.server.stats;

import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import org.holdfast.server.catalog.DailyStatsStore;
import org.holdfast.server.stats.TransferRates.Direction;

/**
 * The daily totals for the console's charts, kept in the catalog: one record per UTC day, written
 * by each {@link #update} (today's record is rewritten in place, so a day has one record however
 * often it runs) and kept for {@link #KEEP_DAYS} days. Bytes backed up and restored during a day
 * continue across restarts: the day's stored record is the starting point of the counts.
 */
public final class DailySeries {
    /** Days of history kept (about three years). */
    public static final int KEEP_DAYS = 1096;

    private final DailyStatsStore store;
    private final TransferRates rates;
    private final Clock clock;
    // the day being counted, what was already counted for it before this server started, and the
    // rates' running totals when counting of it began here
    private LocalDate day;
    private long ingestedBase;
    private long restoredBase;
    private long ingestedMark;
    private long restoredMark;

    public DailySeries(DailyStatsStore store, TransferRates rates, Clock clock) {
        this.store = store;
        this.rates = rates;
        this.clock = clock;
    }

    /** Writes today's record from {@code report}; on the first update of a new day also prunes days past the bound. */
    public synchronized DailyStatsStore.Day update(StatsReport report) {
        long now = clock.millis();
        LocalDate today = LocalDate.ofInstant(Instant.ofEpochMilli(now), ZoneOffset.UTC);
        long ingested = rates.total(Direction.INGEST);
        long restored = rates.total(Direction.RESTORE);
        if (day == null || !day.equals(today)) {
            if (day != null) {
                // bytes moved since the last update belong to the day that ended (as near as a tick allows)
                store.get(day).ifPresent(d -> store.put(new DailyStatsStore.Day(d.day(), d.storedBytes(), d.logicalBytes(),
                        d.dedupRatio(), ingestedBase + ingested - ingestedMark, restoredBase + restored - restoredMark, d.snapshots(), now)));
            }
            DailyStatsStore.Day stored = store.get(today).orElse(null);
            ingestedBase = stored == null ? 0 : stored.bytesIngested();
            restoredBase = stored == null ? 0 : stored.bytesRestored();
            // the first update after startup counts from the server's start (the rates begin at 0 then)
            ingestedMark = day == null ? 0 : ingested;
            restoredMark = day == null ? 0 : restored;
            day = today;
            store.deleteBefore(today.minusDays(KEEP_DAYS - 1));
        }
        DailyStatsStore.Day d = new DailyStatsStore.Day(today, report.stored().payloadBytes(), report.logical().logicalBytes(),
                report.dedupRatio(), ingestedBase + ingested - ingestedMark, restoredBase + restored - restoredMark,
                report.logical().snapshots(), now);
        store.put(d);
        return d;
    }

    /** The records from {@code from} to {@code to}, both inclusive, oldest first. */
    public List<DailyStatsStore.Day> range(LocalDate from, LocalDate to) {
        return store.range(from, to, KEEP_DAYS);
    }
}
