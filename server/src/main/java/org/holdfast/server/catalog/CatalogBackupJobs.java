package org.holdfast.server.catalog;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.jobs.JobSchedule;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.CatalogBackups;

/**
 * Catalog backups as jobs ({@value #KIND}, lane {@value #LANE}), on demand and every
 * {@code interval}. Each backup stores beside it how many snapshots the catalog held and the newest
 * one's time, counted under the commit monitor just before the copy starts (so the backup holds at
 * least those; a commit that lands in the backup's first moments may be in it too). The copy
 * itself runs outside the monitor: commits go on meanwhile (see {@link CatalogBackups}).
 */
public final class CatalogBackupJobs implements AutoCloseable {
    /** The job kind. */
    public static final String KIND = "catalog-backup";
    /** One backup at a time, beside GC and verify. */
    public static final String LANE = "catalog-backup";

    /** A backup as the API lists it: what the catalog held, and what the backup costs. */
    public record Listed(int id, Instant time, long bytes, int files, long snapshots, Instant newestSnapshot) {
    }

    private final CatalogBackups backups;
    private final Catalog catalog;
    private final Object commitMonitor;
    private final Jobs jobs;
    private final int keep;
    private JobSchedule schedule;

    /** {@code commitMonitor} is the object snapshot commits synchronize on (the {@link SnapshotCommit}). */
    public CatalogBackupJobs(CatalogBackups backups, Catalog catalog, Object commitMonitor, Jobs jobs, int keep) {
        if (keep < 1) {
            throw new IllegalArgumentException("holdfast.catalog.backup.keep must be at least 1, got " + keep);
        }
        this.backups = backups;
        this.catalog = catalog;
        this.commitMonitor = commitMonitor;
        this.jobs = jobs;
        this.keep = keep;
    }

    /** Queues a backup; its result names the backup's id, size and the bytes this one copied. */
    public Job submit(String submittedBy) {
        return jobs.submit(KIND, LANE, submittedBy, this::run);
    }

    private Map<String, Object> run(JobContext job) {
        long[] held;
        synchronized (commitMonitor) {
            held = count(catalog);
        }
        long before = backups.bytesOnDisk();
        job.log("backing up the catalog (" + held[0] + " snapshots) into " + backups.dir());
        // the engine reports no progress: the bytes copied so far are the backup directory's growth
        AtomicLong reported = new AtomicLong();
        ScheduledExecutorService watch = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "holdfast-catalog-backup-progress");
            t.setDaemon(true);
            return t;
        });
        watch.scheduleWithFixedDelay(() -> advanceTo(job, reported, backups.bytesOnDisk() - before), 250, 250, TimeUnit.MILLISECONDS);
        CatalogBackups.Created created;
        try {
            created = backups.create(catalog.db(), metadata(held[0], held[1]), keep);
        } finally {
            watch.shutdownNow();
            awaitQuietly(watch);
        }
        CatalogBackups.Info made = created.info();
        long copied = created.bytesCopied();
        job.advance(made.files(), Math.max(0, copied - reported.get()));
        job.log("backup " + made.id() + ": " + made.files() + " files, " + made.bytes() + " bytes (" + copied
                + " new on the backup disk); keeping the newest " + keep);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("backupId", (long) made.id());
        r.put("files", (long) made.files());
        r.put("bytes", made.bytes());
        r.put("bytesCopied", copied);
        r.put("snapshots", held[0]);
        r.put("newestSnapshot", held[1] == 0 ? null : Instant.ofEpochMilli(held[1]).toString());
        return r;
    }

    private static void advanceTo(JobContext job, AtomicLong reported, long copied) {
        long prev = reported.get();
        if (copied > prev && reported.compareAndSet(prev, copied)) {
            job.advance(0, copied - prev);
        }
    }

    private static void awaitQuietly(ScheduledExecutorService watch) {
        try {
            watch.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The backups, newest first. */
    public List<Listed> list() {
        return backups.list().stream().sorted((a, b) -> Integer.compare(b.id(), a.id())).map(CatalogBackupJobs::listed).toList();
    }

    static Listed listed(CatalogBackups.Info i) {
        long[] m = parse(i.metadata());
        return new Listed(i.id(), Instant.ofEpochSecond(i.timeSeconds()), i.bytes(), i.files(), m[0],
                m[1] == 0 ? null : Instant.ofEpochMilli(m[1]));
    }

    /** Snapshots in {@code catalog} and the newest one's creation time (epoch ms, 0 if none). */
    public static long[] count(Catalog catalog) {
        long n = 0;
        long newest = 0;
        for (VolumeRecord v : catalog.volumes()) {
            for (SnapshotRecord s : catalog.snapshots(v)) {
                n++;
                newest = Math.max(newest, s.createdAtMillis());
            }
        }
        return new long[] {n, newest};
    }

    static String metadata(long snapshots, long newestMillis) {
        return "snapshots=" + snapshots + ";newest=" + newestMillis;
    }

    /** {snapshots, newest ms} from a backup's metadata; zeros for text we did not write. */
    static long[] parse(String metadata) {
        long[] out = new long[2];
        if (metadata == null) {
            return out;
        }
        for (String part : metadata.split(";")) {
            int eq = part.indexOf('=');
            try {
                if (part.startsWith("snapshots=")) {
                    out[0] = Long.parseLong(part.substring(eq + 1));
                } else if (part.startsWith("newest=")) {
                    out[1] = Long.parseLong(part.substring(eq + 1));
                }
            } catch (NumberFormatException e) {
                // not ours: shown as zero
            }
        }
        return out;
    }

    /** Starts a backup every {@code every} (null: on demand only); the first after one interval. */
    public synchronized void startSchedule(Duration every) {
        if (every == null || every.isZero() || schedule != null) {
            return;
        }
        schedule = JobSchedule.start(KIND, every, jobs, () -> submit("schedule"));
    }

    /** Stops the schedule; closes the backups after the job runner finished the running one. */
    @Override
    public synchronized void close() {
        if (schedule != null) {
            schedule.close();
            schedule = null;
        }
    }
}
