package org.holdfast.server.gc;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobResults;
import org.holdfast.server.jobs.Jobs;

/**
 * The GC's long operations as jobs: a cycle (retention, sweep, compaction), compaction alone, fsck
 * and reclaim-now. They share the lane {@link #LANE}, so they never overlap: a second one queues
 * behind the first (two sweeps, or a check during a sweep, would only contend or see a moving GMA).
 * Each job's result is its report (as the synchronous calls answered it).
 */
public final class GcJobs {
    /** The lane every GC job runs in: one at a time. */
    public static final String LANE = "gc";
    public static final String CYCLE = "gc-cycle";
    public static final String COMPACTION = "compaction";
    public static final String FSCK = "fsck";
    public static final String RECLAIM = "reclaim";

    private final GcService gc;
    private final Jobs jobs;
    private final ClusterCountsCheck workerCounts;

    public GcJobs(GcService gc, Jobs jobs) {
        this(gc, jobs, null);
    }

    /** With {@code workerCounts} (a master whose blocks live on workers): fsck checks the workers' GC counts instead. */
    public GcJobs(GcService gc, Jobs jobs, ClusterCountsCheck workerCounts) {
        this.gc = gc;
        this.jobs = jobs;
        this.workerCounts = workerCounts;
    }

    /** Queues a GC cycle; its result is the {@link GcService.CycleReport}. */
    public Job cycle(String submittedBy) {
        return cycle(submittedBy, r -> { });
    }

    /** Queues a GC cycle that hands its report to {@code done} (in the job, after the cycle; the schedule logs it). */
    public Job cycle(String submittedBy, Consumer<GcService.CycleReport> done) {
        return jobs.submit(CYCLE, LANE, submittedBy, job -> {
            GcService.CycleReport r = gc.runCycle(job);
            done.accept(r);
            return JobResults.of(r);
        });
    }

    /** Queues a compaction of the sealed data logs; its result is the {@link GcService.CompactionReport} (empty if off). */
    public Job compaction(String submittedBy) {
        return jobs.submit(COMPACTION, LANE, submittedBy, job -> {
            job.total(1, -1);
            job.log("compaction: rewriting sealed data logs whose live share is below the threshold");
            GcService.CompactionReport r = gc.compact();
            job.advance(1, r == null ? 0 : r.bytesCopied());
            job.log(r == null ? "compaction: off (holdfast.gc.compaction-threshold is 0)" : "compaction: " + r.logsExamined()
                    + " logs examined, " + r.logsRewritten() + " rewritten, " + r.logsDeleted() + " deleted, "
                    + r.bytesReclaimed() + " bytes reclaimed");
            return JobResults.of(r);
        });
    }

    /**
     * Queues the independent check; its result is the {@link FsckReport} plus {@code clean} and
     * {@code dataLoss}, or on a master whose blocks live on workers the {@link ClusterCountsCheck.Report}.
     */
    public Job fsck(String submittedBy) {
        return fsck(submittedBy, null);
    }

    /**
     * As {@link #fsck(String)}; {@code worker} (not null) checks that worker only.
     *
     * @throws IllegalArgumentException a worker named on a server whose blocks are not on workers
     * @throws org.holdfast.server.cluster.UnknownWorkerException no such worker; nothing queued
     */
    public Job fsck(String submittedBy, Long worker) {
        if (workerCounts != null) {
            if (worker != null) {
                workerCounts.requireWorker(worker);
            }
            return jobs.submit(FSCK, LANE, submittedBy, job -> {
                ClusterCountsCheck.Report r = worker == null ? workerCounts.run(gc.now(), job) : workerCounts.runOne(worker, gc.now(), job);
                job.log("fsck of the workers' GC counts: " + (r.clean() ? "clean" : r.dataLoss() ? "DATA LOSS" : "not clean") + ", "
                        + r.workersChecked() + " workers checked, " + r.workersNotChecked() + " not checked, " + r.mismatches()
                        + " mismatches");
                return JobResults.of(r);
            });
        }
        if (worker != null) {
            throw new IllegalArgumentException("worker " + worker + " named, but this server keeps its blocks itself (not a master with"
                    + " holdfast.cluster.data=workers): run fsck without worker");
        }
        return jobs.submit(FSCK, LANE, submittedBy, job -> {
            FsckReport r = gc.fsck(gc.now(), job);
            job.log("fsck: " + (r.clean() ? "clean" : r.dataLoss() ? "DATA LOSS" : "errors") + ", " + r.snapshotsChecked()
                    + " snapshots, " + r.referencedPbns() + " referenced blocks");
            Map<String, Object> out = new LinkedHashMap<>(JobResults.of(r));
            out.put("clean", r.clean());
            out.put("dataLoss", r.dataLoss());
            return out;
        });
    }

    /** Queues reclaim-now; its result is the {@link GcService.ReclaimReport}. */
    public Job reclaim(String submittedBy) {
        return reclaim(submittedBy, java.util.OptionalDouble.empty());
    }

    /** As above, its compaction at {@code compactionThreshold} instead of the setting, if present (see {@link GcService#reclaimNow}). */
    public Job reclaim(String submittedBy, java.util.OptionalDouble compactionThreshold) {
        return jobs.submit(RECLAIM, LANE, submittedBy, job -> JobResults.of(gc.reclaimNow(job, compactionThreshold)));
    }
}
