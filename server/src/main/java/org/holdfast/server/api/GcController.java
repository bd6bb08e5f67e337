package org.holdfast.server.api;

import java.util.OptionalDouble;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.store.CompactionThreshold;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Garbage collection: runs, compaction, fsck and reclaim-now on demand (as jobs: 202 with the job's
 * URL in Location, poll {@code GET /api/v1/jobs/{id}}) and status (retention policies: {@link RetentionController};
 * holds and locks: {@link SnapshotController}).
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
@NeedsGcBookkeeping
public class GcController {
    private final GcService gc;
    private final GcJobs gcJobs;

    public GcController(GcService gc, GcJobs gcJobs) {
        this.gc = gc;
        this.gcJobs = gcJobs;
    }

    /** Status of the GC: the last run (with its compaction), the backlog of metadata updates, compaction since start. */
    public record GcStatus(GcService.CycleReport lastRun, long queuedUpdates, long lastAppliedOperation,
                           GcService.CompactionTotals compaction) {
    }

    /** Starts a GC cycle (retention, a sweep, compaction) as a job; its result is what it did. */
    @PostMapping("/api/v1/gc/runs")
    @Audited("gc.run")
    public ResponseEntity<JobView> run(HttpServletRequest request) {
        return JobController.accepted(gcJobs.cycle(Principals.name(request)));
    }

    /** Starts a compaction of the sealed data logs as a job. */
    @PostMapping("/api/v1/gc/compactions")
    @Audited("gc.compact")
    public ResponseEntity<JobView> compact(HttpServletRequest request) {
        return JobController.accepted(gcJobs.compaction(Principals.name(request)));
    }

    /**
     * Starts reclaim-now (an exact mark, then frees what nothing retained references, then compacts)
     * as a job; {@code compactionThreshold} (0..1) replaces {@code holdfast.gc.reclaim-compaction-threshold} for this run.
     */
    @NeedsLocalBlocks // its mark counts every PBN from the master's own range: the workers' ranges are not its to free
    @PostMapping("/api/v1/gc/reclaim")
    @Audited("gc.reclaim")
    public ResponseEntity<JobView> reclaim(HttpServletRequest request,
                                           @RequestParam(name = "compactionThreshold", required = false) Double compactionThreshold) {
        OptionalDouble threshold = OptionalDouble.empty();
        if (compactionThreshold != null) {
            threshold = OptionalDouble.of(CompactionThreshold.check(compactionThreshold, t -> "compactionThreshold must be a live share"
                    + " in 0..1 (0.95: rewrite every data log less than 95 % live), got " + t + "; no reclaim-now was started"));
        }
        return JobController.accepted(gcJobs.reclaim(Principals.name(request), threshold));
    }

    @GetMapping("/api/v1/gc/status")
    public GcStatus status() {
        return new GcStatus(gc.lastCycle(), gc.pipeline().queuedUpdates(), gc.lastAppliedOp(), gc.compactionTotals());
    }

    /**
     * Starts the independent check as a job; it reads every retained snapshot, so it takes a while on a
     * big store. On a master whose blocks live on workers it checks each worker's GC counts against the
     * catalog instead ({@code worker}: that one only).
     */
    @PostMapping("/api/v1/gc/fsck")
    @Audited("gc.fsck")
    public ResponseEntity<JobView> fsck(HttpServletRequest request, @RequestParam(name = "worker", required = false) Long worker) {
        return JobController.accepted(gcJobs.fsck(Principals.name(request), worker));
    }
}
