package org.holdfast.server.verify;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobResults;
import org.holdfast.server.jobs.JobSchedule;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.OfflineVerifyRequest;

/**
 * Verify passes as jobs, on demand and on a schedule. They run in a lane of their own,
 * {@link #LANE}: a pass over a big store takes hours, and GC (retention, sweeps, compaction that
 * frees space) must not queue behind it. Running beside GC is safe: reads hold the store's
 * relocation lock, and a block GC frees mid-pass is referenced by no snapshot any more. Two passes
 * never overlap (one lane). Keeps totals for metrics.
 */
public final class VerifyJobs implements AutoCloseable {
    /** The lane verify jobs run in: one pass at a time, beside the GC lane. */
    public static final String LANE = "verify";
    /** The job kind. */
    public static final String KIND = "verify";

    private final Verifier verifier;
    private final Jobs jobs;
    private final AtomicReference<Verifier.Report> last = new AtomicReference<>();
    private final AtomicLong lastEndedMillis = new AtomicLong();
    private final AtomicLong blocksRead = new AtomicLong();
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong runs = new AtomicLong();
    private JobSchedule schedule;

    public VerifyJobs(Verifier verifier, Jobs jobs) {
        this.verifier = verifier;
        this.jobs = jobs;
    }

    /**
     * Queues a pass over {@code scope}; an unknown volume or snapshot is refused here (before any job
     * exists) with the catalog's exception.
     */
    public Job submit(VerifyScope scope, String submittedBy) {
        return submit(scope, false, submittedBy);
    }

    /** Like {@link #submit(VerifyScope, String)}; {@code full} reads every block, also those found sound within the window. */
    public Job submit(VerifyScope scope, boolean full, String submittedBy) {
        return submit(scope, full, submittedBy, new long[0]);
    }

    /** As {@link #submit(VerifyScope, boolean, String)}; the pass reads {@code suspect} whatever its window. */
    private Job submit(VerifyScope scope, boolean full, String submittedBy, long[] suspect) {
        verifier.snapshots(scope); // refuse unknown names at once
        return jobs.submit(KIND, LANE, submittedBy, job -> {
            verifier.forgetVerified(suspect);
            Verifier.Report r = verifier.run(scope, full, job);
            last.set(r);
            lastEndedMillis.set(System.currentTimeMillis());
            runs.incrementAndGet();
            blocksRead.addAndGet(r.blocksRead());
            bytesRead.addAndGet(r.bytesRead());
            return JobResults.of(r);
        });
    }

    /**
     * After each job of kind {@code fsckKind} whose result counts {@code corruptBlocks}, queues a pass
     * over everything (unless one is queued already). fsck marks the blocks bad but cannot say which
     * snapshots reference them; the pass records that without reading them again, so their volumes
     * are flagged and their next backups are full and repair them.
     */
    public void passAfterCorruptFsck(String fsckKind) {
        jobs.onEnded(job -> {
            if (!fsckKind.equals(job.kind()) || job.state() != JobState.SUCCEEDED
                    || !(job.result().get("corruptBlocks") instanceof Map<?, ?> found)
                    || !(found.get("count") instanceof Long n) || n == 0) {
                return;
            }
            if (jobs.list(new Jobs.Query(KIND, JobState.QUEUED, null, 1)).jobs().isEmpty()) {
                submit(VerifyScope.all(), "fsck");
            }
        });
    }

    /**
     * Runs the pass an offline fsck asked for in the data directory {@code root}, if it did: a pass
     * over everything as {@link #passAfterCorruptFsck} queues, which reads the corrupt blocks fsck
     * listed whenever they were last found sound; removes the request once that pass succeeded (a
     * crash or a failed pass leaves it for the next start). Returns the job, or null if nothing was
     * requested.
     *
     * <p>The listed blocks are not marked bad from the file: the pass marks what this store's own
     * read finds corrupt. A request outlives the start that read it (until its pass succeeds), may
     * come from a copy of another data directory, and a block it names may have been repaired in
     * place meanwhile; a mark from the file alone would make such a sound block unrestorable.
     */
    public Job passRequestedOffline(java.nio.file.Path root) {
        OfflineVerifyRequest r = OfflineVerifyRequest.read(root);
        if (r == null) {
            return null;
        }
        Job queued = submit(VerifyScope.all(), r.full(), r.by(), r.pbns());
        jobs.onEnded(job -> {
            if (job.id() == queued.id() && job.state() == JobState.SUCCEEDED) {
                r.clear(root);
            }
        });
        return queued;
    }

    /** Starts scheduled passes over everything every {@code settings.schedule()} (nothing if off); the first after one interval. */
    public synchronized void startSchedule() {
        var every = verifier.settings().schedule();
        if (every == null || schedule != null) {
            return;
        }
        schedule = JobSchedule.start(KIND, every, jobs, () -> submit(VerifyScope.all(), "schedule"));
    }

    /** The report of the last finished pass, or null. */
    public Verifier.Report lastReport() {
        return last.get();
    }

    /** When the last pass ended (epoch millis), or 0. */
    public long lastEndedMillis() {
        return lastEndedMillis.get();
    }

    public long blocksReadTotal() {
        return blocksRead.get();
    }

    public long bytesReadTotal() {
        return bytesRead.get();
    }

    public long runsTotal() {
        return runs.get();
    }

    public Verifier verifier() {
        return verifier;
    }

    @Override
    public synchronized void close() {
        if (schedule != null) {
            schedule.close();
            schedule = null;
        }
    }
}
