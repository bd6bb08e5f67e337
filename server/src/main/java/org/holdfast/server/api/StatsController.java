package org.holdfast.server.api;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.catalog.DailyStatsStore;
import org.holdfast.server.stats.Capacity;
import org.holdfast.server.stats.DailySeries;
import org.holdfast.server.stats.Statistics;
import org.holdfast.server.stats.StatsHistory;
import org.holdfast.server.stats.StatsReport;
import org.holdfast.server.store.LogArchive;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Conditional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Statistics: capacity, stored and protected bytes, ratios, reclaimable bytes, rates, object-store requests; and the daily series. */
@RestController
@Conditional(OnStandaloneOrMaster.class)
@RequestMapping("/api/v1/stats")
public class StatsController {
    /** Longest range {@code /stats/daily} answers, in days. */
    static final int MAX_DAYS = DailySeries.KEEP_DAYS;
    /** Days {@code /stats/daily} answers without {@code from}. */
    static final int DEFAULT_DAYS = 30;

    private final Statistics statistics;
    private final DailySeries daily;
    private final StatsHistory history;
    // backend s3 only
    private final ObjectProvider<LogArchive> archive;

    public StatsController(Statistics statistics, DailySeries daily, StatsHistory history, ObjectProvider<LogArchive> archive) {
        this.statistics = statistics;
        this.daily = daily;
        this.history = history;
        this.archive = archive;
    }

    @GetMapping
    public StatsView stats() {
        LogArchive a = archive.getIfAvailable();
        return StatsView.of(statistics.report(), a == null ? null : ObjectStoreView.of(a.stats()));
    }

    /** Daily totals from {@code from} to {@code to} (ISO dates, UTC, both inclusive; default: the last 30 days up to today). */
    @GetMapping("/daily")
    public List<DayView> daily(@RequestParam(required = false) String from, @RequestParam(required = false) String to) {
        LocalDate last = to == null ? LocalDate.now(ZoneOffset.UTC) : date("to", to);
        LocalDate first = from == null ? last.minusDays(DEFAULT_DAYS - 1) : date("from", from);
        if (first.isAfter(last)) {
            throw new IllegalArgumentException("from (" + first + ") is after to (" + last + "); give from <= to");
        }
        if (first.plusDays(MAX_DAYS).isBefore(last.plusDays(1))) {
            throw new IllegalArgumentException("the range " + first + ".." + last + " is longer than " + MAX_DAYS
                    + " days (the series keeps no more); ask for a shorter one");
        }
        return daily.range(first, last).stream().map(DayView::of).toList();
    }

    /** The in-memory samples (every {@code holdfast.stats.sample-interval}) at or after {@code since} (ISO-8601; default all), oldest first. */
    @GetMapping("/history")
    public List<SampleView> history(@RequestParam(required = false) String since) {
        long from = 0;
        if (since != null && !since.isBlank()) {
            try {
                from = Instant.parse(since.trim()).toEpochMilli();
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("since '" + since + "' is not an instant; use ISO-8601 UTC, e.g. 2026-01-31T12:00:00Z");
            }
        }
        return history.since(from).stream().map(SampleView::of).toList();
    }

    private static LocalDate date(String name, String value) {
        try {
            return LocalDate.parse(value);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(name + " '" + value + "' is not a date; use YYYY-MM-DD, e.g. 2026-01-31");
        }
    }

    private static String iso(long millis) {
        return Instant.ofEpochMilli(millis).toString();
    }

    /** {@link StatsReport} with ISO-8601 times, and the object store's figures (null with backend local). */
    public record StatsView(String at, String surveyedAt, Capacity capacity, StatsReport.Stored stored,
                            StatsReport.Logical logical, double dedupRatio, double compressionRatio, double reductionRatio,
                            StatsReport.Reclaimable reclaimable, StatsReport.Transfers transfers, List<VolumeStatsView> volumes,
                            ObjectStoreView objectStore) {
        static StatsView of(StatsReport r, ObjectStoreView objectStore) {
            return new StatsView(iso(r.atMillis()), iso(r.surveyedAtMillis()), r.capacity(), r.stored(), r.logical(),
                    r.dedupRatio(), r.compressionRatio(), r.reductionRatio(), r.reclaimable(), r.transfers(),
                    r.volumes().stream().map(VolumeStatsView::of).toList(), objectStore);
        }
    }

    /**
     * Backend s3, since the server started: requests by kind (every attempt, as stores bill them), bytes
     * uploaded and fetched, retries, time spent waiting for the request-rate limits, and data logs
     * uploaded, failed to upload (retried later) and fetched back.
     */
    public record ObjectStoreView(Requests requests, long putBytes, long getBytes, long retries, long rateLimitedMillis,
                                  long logsUploaded, long uploadFailures, long logsFetched) {
        static ObjectStoreView of(LogArchive.Stats s) {
            var r = s.requests();
            return new ObjectStoreView(new Requests(r.puts(), r.gets(), r.deletes(), r.heads(), r.lists()), r.putBytes(), r.getBytes(),
                    r.retries(), r.rateLimitedMillis(), s.logsUploaded(), s.uploadFailures(), s.logsFetched());
        }
    }

    /** Object-store requests by kind. */
    public record Requests(long put, long get, long delete, long head, long list) {
    }

    /** One volume's figures ({@link StatsReport.Volume}) with an ISO-8601 last backup time (null: never). */
    public record VolumeStatsView(String name, long snapshots, long logicalBytes, long newestLogicalBytes, long storedBytesAdded,
                                  double compressionRatio, String lastBackupAt, double ingestBytesPerSecond,
                                  double restoreBytesPerSecond) {
        static VolumeStatsView of(StatsReport.Volume v) {
            return new VolumeStatsView(v.name(), v.snapshots(), v.logicalBytes(), v.newestLogicalBytes(), v.storedBytesAdded(),
                    v.compressionRatio(), v.lastBackupAtMillis() == null ? null : iso(v.lastBackupAtMillis()),
                    v.ingestBytesPerSecond(), v.restoreBytesPerSecond());
        }
    }

    /** One sample of the recent history ({@link StatsHistory.Sample}) with an ISO-8601 time. */
    public record SampleView(String at, long storedBytes, long dataLogBytes, long logicalBytes, long bytesIngested,
                             double ingestBytesPerSecond) {
        static SampleView of(StatsHistory.Sample s) {
            return new SampleView(iso(s.atMillis()), s.storedBytes(), s.dataLogBytes(), s.logicalBytes(), s.bytesIngested(),
                    s.ingestBytesPerSecond());
        }
    }

    /** One day of the series. */
    public record DayView(LocalDate date, long storedBytes, long logicalBytes, double dedupRatio, long bytesIngested,
                          long bytesRestored, long snapshots, String updatedAt) {
        static DayView of(DailyStatsStore.Day d) {
            return new DayView(d.day(), d.storedBytes(), d.logicalBytes(), d.dedupRatio(), d.bytesIngested(), d.bytesRestored(),
                    d.snapshots(), iso(d.updatedAtMillis()));
        }
    }
}
