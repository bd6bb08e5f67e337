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
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobCancelledException;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.jobs.JobSchedule;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.DataLogsInBucket;
import org.holdfast.server.store.UnknownCatalogBackupException;

/**
 * Catalog backups as jobs ({@value #KIND}, lane {@value #LANE}), on demand and every
 * {@code interval}. Each backup stores beside it how many snapshots the catalog held and the newest
 * one's time, counted under the commit monitor just before the copy starts (so the backup holds at
 * least those; a commit that lands in the backup's first moments may be in it too). The copy
 * itself runs outside the monitor: commits go on meanwhile (see {@link CatalogBackups}).
 *
 * <p>Every new backup is verified at once, with checksums of every byte it holds (shared tables
 * included: bit rot in an old table is found now, not at restore time); a damaged one fails the job.
 * Older backups are re-checked on request ({@value #VERIFY_KIND} jobs, same lane). Each outcome is
 * audited ({@value #AUDIT_VERIFIED}) and the last failure is kept for the health check and metrics.
 */
public final class CatalogBackupJobs implements AutoCloseable {
    /** The job kind. */
    public static final String KIND = "catalog-backup";
    /** One backup at a time, beside GC and verify. */
    public static final String LANE = "catalog-backup";
    /** The job kind of a re-check of an existing backup. */
    public static final String VERIFY_KIND = "catalog-backup-verify";
    /** The audit action of every verification's outcome (result ok or failed). */
    public static final String AUDIT_VERIFIED = "catalog.backup.verified";

    /**
     * A backup as the API lists it: what the catalog held, what the backup costs, and its last
     * verification (null if never verified).
     */
    public record Listed(int id, Instant time, long bytes, int files, long snapshots, Instant newestSnapshot, Verified verified) {
    }

    /** A verification as the API lists it: when, how thoroughly, the outcome, and what was damaged. */
    public record Verified(Instant at, boolean checksums, String result, long damagedFiles, List<String> problems) {
        static Verified of(CatalogBackups.Verification v) {
            return new Verified(Instant.ofEpochMilli(v.atMillis()), v.checksums(), v.sound() ? "sound" : "damaged", v.damaged(),
                    v.problems());
        }
    }

    /** The last backup or verification job that failed, and why (cleared by the next backup that succeeds and verifies). */
    public record Failure(Instant at, String kind, String message) {
    }

    private final CatalogBackups backups;
    private final Catalog catalog;
    private final Object commitMonitor;
    private final Jobs jobs;
    private final int keep;
    private final AuditLog audit;
    private final DataLogsInBucket logs;
    private final AtomicReference<Failure> lastFailure = new AtomicReference<>();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong lastSoundMillis = new AtomicLong();
    private JobSchedule schedule;

    /** {@code commitMonitor} is the object snapshot commits synchronize on (the {@link SnapshotCommit}). */
    public CatalogBackupJobs(CatalogBackups backups, Catalog catalog, Object commitMonitor, Jobs jobs, int keep, AuditLog audit) {
        this(backups, catalog, commitMonitor, jobs, keep, audit, DataLogsInBucket.NONE);
    }

    /** As above; {@code logs}: with backend s3, every backup waits until the bucket holds the blocks it names. */
    public CatalogBackupJobs(CatalogBackups backups, Catalog catalog, Object commitMonitor, Jobs jobs, int keep, AuditLog audit,
                             DataLogsInBucket logs) {
        if (keep < 1) {
            throw new IllegalArgumentException("holdfast.catalog.backup.keep must be at least 1, got " + keep);
        }
        this.backups = backups;
        this.catalog = catalog;
        this.commitMonitor = commitMonitor;
        this.jobs = jobs;
        this.keep = keep;
        this.audit = audit;
        this.logs = logs;
    }

    /** Queues a backup; its result names the backup's id, size and the bytes this one copied, and its verification. */
    public Job submit(String submittedBy) {
        return jobs.submit(KIND, LANE, submittedBy, job -> failing(KIND, () -> run(job, submittedBy)));
    }

    /**
     * Queues a re-check of backup {@code id} with checksums of every byte; an unknown id is refused
     * here, before any job exists. The job fails if the backup is damaged.
     */
    public Job verify(int id, String submittedBy) {
        CatalogBackups.Info info = backups.requireListed(id); // a request does not wait for a backup's copy
        return jobs.submit(VERIFY_KIND, LANE, submittedBy, job -> failing(VERIFY_KIND, () -> {
            job.total(info.files(), info.bytes());
            job.log("verifying catalog backup " + id + " (" + info.files() + " files, " + info.bytes() + " bytes) with checksums");
            CatalogBackups.Verification v = check(job, id, submittedBy, n -> job.advance(0, n), false);
            job.advance(v.files(), 0);
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("backupId", (long) id);
            r.put("verification", verificationResult(v));
            return r;
        }));
    }

    /** Runs {@code work}; a failure is remembered (health, metrics) before it fails the job. */
    private Map<String, Object> failing(String kind, Supplier<Map<String, Object>> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            // a cancel, or a re-check of a backup purged while it queued, says nothing about the backups' health
            if (!(e instanceof JobCancelledException) && !(e instanceof UnknownCatalogBackupException)) {
                failures.incrementAndGet();
                lastFailure.set(new Failure(Instant.now(), kind, e.getMessage()));
            }
            throw e;
        }
    }

    /**
     * Verifies backup {@code id} with checksums, reporting bytes read to {@code progress}; audits the
     * outcome; throws if damaged. {@code fresh}: the backup was just written (and nothing purged for it).
     */
    private CatalogBackups.Verification check(JobContext job, int id, String by, LongConsumer progress,
                                              boolean fresh) {
        CatalogBackups.Verification v = backups.verify(id, true, progress, System.currentTimeMillis());
        if (v.sound()) {
            job.log("backup " + id + " verified: " + v.files() + " files, " + v.bytes() + " bytes, every checksum matches");
            audit.record(new AuditEvent(v.atMillis(), by, "local", AUDIT_VERIFIED, "catalog-backup:" + id, "ok",
                    v.files() + " files, " + v.bytes() + " bytes, checksums"));
            return v;
        }
        String older = olderHint(id, v);
        String message = "catalog backup " + id + " in " + backups.dir() + " is damaged: " + v.damaged() + " of its " + v.files()
                + " files fail verification (" + String.join("; ", v.problems()) + "). The backup disk may be failing: check it"
                + " (kernel log, SMART). The next backup (scheduled, or POST /api/v1/catalog/backups) sets damaged shared files aside"
                + " and copies those tables afresh from the catalog, dropping the backups that held them (they cannot be restored); "
                + older + (fresh ? ". No sound older backup was deleted for this one (keep applies to them after a sound backup only;"
                + " damaged ones beyond the newest keep go)" : "");
        job.log(message);
        audit.record(new AuditEvent(v.atMillis(), by, "local", AUDIT_VERIFIED, "catalog-backup:" + id, "failed",
                v.damaged() + " damaged files: " + String.join("; ", v.damagedFiles())));
        throw new CatalogBackupDamagedException(message);
    }

    private String olderHint(int id, CatalogBackups.Verification v) {
        Integer older = backups.olderWithout(id, v.damagedFiles());
        return older == null ? "no older backup is free of the damaged files"
                : "backup " + older + " holds none of the damaged files (verify it: POST /api/v1/catalog/backups/" + older + "/verify)";
    }

    private static Map<String, Object> verificationResult(CatalogBackups.Verification v) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("result", v.sound() ? "sound" : "damaged");
        r.put("checksums", v.checksums());
        r.put("files", v.files());
        r.put("bytes", v.bytes());
        r.put("damagedFiles", v.damaged());
        return r;
    }

    private Map<String, Object> run(JobContext job, String submittedBy) {
        long[] held;
        synchronized (commitMonitor) {
            held = count(catalog);
        }
        verifyUnrecordedNewest(job);
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
            created = backups.create(catalog.db(), metadata(held[0], held[1]));
        } finally {
            watch.shutdownNow();
            awaitQuietly(watch);
        }
        CatalogBackups.Info made = created.info();
        long copied = created.bytesCopied();
        job.advance(made.files(), Math.max(0, copied - reported.get()));
        if (!created.setAside().isEmpty()) {
            job.log("set aside damaged files " + created.setAside() + " (in " + backups.dir().resolve("holdfast-verify/damaged")
                    + "): their tables were copied afresh; the backups that held them are gone");
        }
        job.log("backup " + made.id() + ": " + made.files() + " files, " + made.bytes() + " bytes (" + copied
                + " new on the backup disk)");
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("backupId", (long) made.id());
        r.put("files", (long) made.files());
        r.put("bytes", made.bytes());
        r.put("bytesCopied", copied);
        r.put("damagedFilesSetAside", created.setAside());
        r.put("snapshots", held[0]);
        r.put("newestSnapshot", held[1] == 0 ? null : Instant.ofEpochMilli(held[1]).toString());
        // a backup is only as good as its files: read them all back now, while the catalog still exists,
        // and only then let older backups go (a damaged one must not push a sound one out)
        CatalogBackups.Verification v;
        try {
            v = check(job, made.id(), submittedBy, n -> { }, true);
        } catch (CatalogBackupDamagedException e) {
            // keep bounds the damaged ones too: only backups found damaged beyond the newest keep go
            try {
                List<Integer> gone = backups.purgeDamaged(keep);
                if (!gone.isEmpty()) {
                    job.log("deleted the damaged backups " + gone + " beyond the newest " + keep + "; sound ones stay");
                }
            } catch (RuntimeException purge) {
                e.addSuppressed(purge); // the damage is what the job reports; the next run purges again
            }
            throw e;
        }
        r.put("verification", verificationResult(v));
        sealDataLogs(job, made.id(), r);
        backups.purge(keep);
        job.log("keeping the newest " + keep + " backups");
        lastFailure.set(null);
        lastSoundMillis.set(v.atMillis());
        return r;
    }

    /**
     * Backend s3: the backup names blocks of the data log being written while it copied, which only
     * the local disk held; seals that log and waits for the uploads, or fails the job naming the logs
     * that are not in the bucket (the backup itself stays: it restores with the local data logs).
     */
    private void sealDataLogs(JobContext job, int id, Map<String, Object> r) {
        if (!logs.archived()) {
            return;
        }
        List<Integer> missing = logs.seal(job::log);
        r.put("dataLogsNotInBucket", missing);
        if (missing.isEmpty()) {
            job.log("every data log the backup names is in the object store");
            return;
        }
        String message = "catalog backup " + id + " is written and verified, but the data logs " + missing + " that hold blocks it"
                + " names are not in the object store: none got through for " + logs.stall().toSeconds() + " s"
                + " (holdfast.store.s3.upload-stall-timeout; uploads failing or stuck: see"
                + " holdfast_objects_logs_upload_failures_total and the server log): restored on a new disk from the bucket, it would"
                + " miss those blocks. The server retries the uploads at its next sync; fix the object store, then take another"
                + " backup (POST /api/v1/catalog/backups)";
        job.log(message);
        throw new IllegalStateException(message);
    }

    /**
     * Every backup this job writes is verified at once, so a newest one without a record is one whose
     * record the backup disk refused (full) or that the server stopped before checking: it is checked
     * now, before the backup that would share its tables, so that damage it holds is set aside first.
     */
    private void verifyUnrecordedNewest(JobContext job) {
        List<CatalogBackups.Info> all = backups.list();
        if (all.isEmpty()) {
            return;
        }
        int newest = all.get(all.size() - 1).id();
        if (!backups.verifications().containsKey(newest)) {
            CatalogBackups.Verification v = backups.verify(newest, true, n -> { }, System.currentTimeMillis());
            job.log("backup " + newest + " had no verification record; checked first: " + (v.sound() ? "sound"
                    : "damaged (" + String.join("; ", v.problems()) + "); its damaged shared files are set aside now"));
        }
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

    /** The backups, newest first, each with its last verification. */
    public List<Listed> list() {
        Map<Integer, CatalogBackups.Verification> checked = backups.verifications();
        return backups.list().stream().sorted((a, b) -> Integer.compare(b.id(), a.id()))
                .map(i -> listed(i, checked.get(i.id()))).toList();
    }

    static Listed listed(CatalogBackups.Info i, CatalogBackups.Verification v) {
        long[] m = parse(i.metadata());
        return new Listed(i.id(), Instant.ofEpochSecond(i.timeSeconds()), i.bytes(), i.files(), m[0],
                m[1] == 0 ? null : Instant.ofEpochMilli(m[1]), v == null ? null : Verified.of(v));
    }

    /** The last failed backup or verification, or null once a backup succeeded and verified since. */
    public Failure lastFailure() {
        return lastFailure.get();
    }

    /** Backup and verification jobs that failed since the start. */
    public long failuresTotal() {
        return failures.get();
    }

    /** When the last backup that verified sound was checked (epoch millis), or 0 since the start. */
    public long lastSoundMillis() {
        return lastSoundMillis.get();
    }

    /** Backups whose last verification found damage. */
    public long damagedBackups() {
        return backups.verifications().values().stream().filter(v -> !v.sound()).count();
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
