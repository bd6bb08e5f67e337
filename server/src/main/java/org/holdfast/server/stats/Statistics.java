package org.holdfast.server.stats;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.gc.StoreSurvey;
import org.holdfast.server.stats.TransferRates.Direction;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.FormatVersions;

/**
 * Makes {@link StatsReport}s. The catalog's figures (snapshots, logical bytes), the data logs'
 * sizes, the capacity and the rates are read for every report: they cost one pass over the
 * snapshot records and a directory listing. The block survey (live and reclaimable bytes) costs a
 * walk of every stored block ({@link StoreSurvey}), so it is cached: a report uses the latest one
 * unless it is older than {@code surveyMaxAge}, and {@link #refreshSurvey()} (run by the server
 * every interval) keeps it fresh. One survey runs at a time; callers that need one meanwhile wait
 * for it and share its result.
 */
public final class Statistics {
    private final Catalog catalog;
    private final Path dataDir;
    private final Path dataLogDir;
    private final StoreSurvey surveyor;
    private final TransferRates rates;
    private final Clock clock;
    private final Duration surveyMaxAge;
    private final double compactionThreshold;
    private final Object surveyLock = new Object();
    private final SurveyPacing pacing = new SurveyPacing();
    private volatile Surveyed surveyed;
    private volatile StatsReport last;

    /**
     * Statistics of the data directory {@code dataDir} (capacity is measured there) whose data logs
     * are in {@code dataLogDir}; {@code compactionThreshold} is GC's ({@code holdfast.gc.compaction-threshold}),
     * which decides which dead bytes a GC run gives back.
     */
    public Statistics(Catalog catalog, Path dataDir, Path dataLogDir, StoreSurvey surveyor, TransferRates rates, Clock clock,
                      Duration surveyMaxAge, double compactionThreshold) {
        this.catalog = catalog;
        this.dataDir = dataDir;
        this.dataLogDir = dataLogDir;
        this.surveyor = surveyor;
        this.rates = rates;
        this.clock = clock;
        this.surveyMaxAge = surveyMaxAge;
        this.compactionThreshold = compactionThreshold;
    }

    /** The transfer rates this report reads (the ingest port records into them). */
    public TransferRates rates() {
        return rates;
    }

    /** A survey and the data logs' record bytes (size less headers, per log id) measured right before it. */
    private record Surveyed(StoreSurvey.Result result, Map<Integer, Long> logRecordBytes) {
    }

    /** The latest survey without walking anything (null before the first); for gauges. */
    public StoreSurvey.Result cachedSurvey() {
        Surveyed s = surveyed;
        return s == null ? null : s.result();
    }

    /** A survey no older than the maximum age, walking the blocks if needed. */
    public StoreSurvey.Result survey() {
        return surveyedNow().result();
    }

    private Surveyed surveyedNow() {
        Surveyed s = surveyed;
        // a report takes a survey up to the maximum age, or older while a large store's paced wait lasts
        if (s != null && clock.millis() - s.result().measuredAtMillis() < pacing.reportMinAgeMillis(surveyMaxAge.toMillis())) {
            return s;
        }
        long asked = clock.millis();
        synchronized (surveyLock) {
            s = surveyed;
            if (s != null && s.result().measuredAtMillis() >= asked) {
                return s; // taken while we waited
            }
            return runSurvey();
        }
    }

    /** Walks the blocks now (after a GC job, which changed what is stored: its result is wanted at once). */
    public StoreSurvey.Result refreshSurvey() {
        return refresh(0);
    }

    /**
     * Walks the blocks unless the latest survey is younger than its pacing allows (the periodic
     * refresh, and the one after a backup): see {@link SurveyPacing}.
     */
    public StoreSurvey.Result refreshSurveyPaced() {
        return refresh(pacing.minAgeMillis(0));
    }

    private StoreSurvey.Result refresh(long minAgeMillis) {
        long asked = clock.millis();
        synchronized (surveyLock) {
            Surveyed s = surveyed;
            if (s == null || s.result().measuredAtMillis() < asked && asked - s.result().measuredAtMillis() >= minAgeMillis) {
                s = runSurvey();
            }
            return s.result();
        }
    }

    /**
     * Walks the blocks, under the survey lock. The data logs are measured just before, so that their
     * dead records are counted against the same moment (measured at report time instead, every block
     * backed up since the survey would count as dead until the next one).
     */
    private Surveyed runSurvey() {
        long start = System.nanoTime();
        Map<Integer, Long> records = recordBytes(dataLogs());
        Surveyed s = new Surveyed(surveyor.run(clock.millis()), records);
        pacing.took((System.nanoTime() - start) / 1_000_000);
        surveyed = s;
        return s;
    }

    /** Statistics now (see the class comment for what it costs). */
    public StatsReport report() {
        Surveyed taken = surveyedNow();
        StoreSurvey.Result s = taken.result();
        long now = clock.millis();
        Map<String, Double> ingestRates = rates.rates(Direction.INGEST);
        Map<String, Double> restoreRates = rates.rates(Direction.RESTORE);
        List<StatsReport.Volume> volumes = new ArrayList<>();
        long snapshots = 0;
        long logical = 0;
        long newest = 0;
        double raw = 0;
        long added = 0;
        for (VolumeRecord v : catalog.volumes()) {
            List<SnapshotRecord> snaps = catalog.snapshots(v);
            long vLogical = 0;
            long vAdded = 0;
            double vRaw = 0;
            for (SnapshotRecord r : snaps) {
                vLogical += r.volumeBytes();
                vAdded += r.storedBytes();
                vRaw += (double) r.newBlocks() * r.blockSize();
            }
            SnapshotRecord last = snaps.isEmpty() ? null : snaps.get(snaps.size() - 1);
            long vNewest = last == null ? 0 : last.volumeBytes();
            String name = v.name().name();
            volumes.add(new StatsReport.Volume(name, snaps.size(), vLogical, vNewest, vAdded, ratio(vRaw, vAdded),
                    last == null ? null : last.createdAtMillis(), ingestRates.getOrDefault(name, 0.0),
                    restoreRates.getOrDefault(name, 0.0)));
            snapshots += snaps.size();
            logical += vLogical;
            newest += vNewest;
            raw += vRaw;
            added += vAdded;
        }
        double compression = ratio(raw, added);
        double rawLive = s.livePayloadBytes() * compression;
        List<Path> logs = dataLogs();
        long dataLogs = sizeOf(logs);
        // the logs as measured with the survey (blocks appended since are not dead), bounded by their records
        // now (a compaction since may have shrunk them); only logs the next GC run rewrites count
        ReclaimableLogs reclaim = ReclaimableLogs.of(s, taken.logRecordBytes(), recordBytes(logs), compactionThreshold);
        List<StatsReport.DateBytes> byDate = new ArrayList<>();
        long cumulative = reclaim.nowBytes();
        for (var e : s.expiringByDay().entrySet()) {
            cumulative += e.getValue();
            byDate.add(new StatsReport.DateBytes(e.getKey(), e.getValue(), cumulative));
        }
        StatsReport r = new StatsReport(now, s.measuredAtMillis(), Capacity.of(dataDir),
                new StatsReport.Stored(s.liveBlocks(), s.livePayloadBytes(), s.liveRecordBytes(), dataLogs),
                new StatsReport.Logical(volumes.size(), snapshots, logical, newest),
                ratio(logical, rawLive), compression, ratio(logical, s.livePayloadBytes()),
                new StatsReport.Reclaimable(reclaim.nowBytes(), s.expiredBytes(), reclaim.compactableBytes(), byDate,
                        s.laterBytes(), s.pinnedBytes()),
                new StatsReport.Transfers(rates.total(Direction.INGEST), rates.total(Direction.RESTORE),
                        rates.rate(Direction.INGEST), rates.rate(Direction.RESTORE), TransferRates.WINDOW_SECONDS),
                volumes);
        last = r;
        return r;
    }

    /** The figures a {@link StatsHistory} sample holds, read now. */
    public record Figures(long atMillis, long storedBytes, long dataLogBytes, long logicalBytes, long bytesIngested,
                          double ingestBytesPerSecond) {
    }

    /**
     * The charted figures now, without a survey: one pass over the snapshot records and a listing of
     * the data logs; the stored payload is the latest survey's (0 before the first).
     */
    public Figures figures() {
        long logical = 0;
        for (VolumeRecord v : catalog.volumes()) {
            for (SnapshotRecord r : catalog.snapshots(v)) {
                logical += r.volumeBytes();
            }
        }
        StoreSurvey.Result s = cachedSurvey();
        return new Figures(clock.millis(), s == null ? 0 : s.livePayloadBytes(), sizeOf(dataLogs()), logical,
                rates.total(Direction.INGEST), rates.rate(Direction.INGEST));
    }

    /** The latest report made (null before the first), without computing anything; for gauges. */
    public StatsReport lastReport() {
        return last;
    }

    /** a / b, or 1 when either is 0 (nothing stored or nothing protected). */
    static double ratio(double a, double b) {
        return a <= 0 || b <= 0 ? 1.0 : a / b;
    }

    private static long sizeOf(List<Path> logs) {
        long sum = 0;
        for (Path p : logs) {
            try {
                sum += Files.size(p);
            } catch (IOException e) {
                // a log compaction deleted between the listing and here: it holds nothing any more
            }
        }
        return sum;
    }

    /** Record bytes (size less header) of each log, by id; a log deleted meanwhile is left out. */
    private static Map<Integer, Long> recordBytes(List<Path> logs) {
        Map<Integer, Long> out = new HashMap<>();
        for (Path p : logs) {
            try {
                out.put(DataLog.parseId(p.getFileName().toString()), Files.size(p) - FormatVersions.DATA_LOG_HEADER_BYTES);
            } catch (IOException e) {
                // a log compaction deleted between the listing and here: it holds nothing any more
            }
        }
        return out;
    }

    private List<Path> dataLogs() {
        try (Stream<Path> s = Files.list(dataLogDir)) {
            return s.filter(p -> DataLog.parseId(p.getFileName().toString()) >= 0).toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the data logs in " + dataLogDir, e);
        }
    }
}
