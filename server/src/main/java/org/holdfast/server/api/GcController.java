package org.holdfast.server.api;

import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.RetentionLocks;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Garbage collection: runs, compaction, fsck and reclaim-now on demand (as jobs: 202 with the job's
 * URL in Location, poll {@code GET /api/v1/jobs/{id}}), status, retention policies and holds.
 */
@RestController
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

    /** A retention policy as text, e.g. {@code 30d} or {@code keep-last=3,daily=7}. */
    public record RetentionView(String policy) {
    }

    /**
     * A snapshot's hold state, its lock (mode {@code governance} or {@code compliance}, {@code until}
     * an ISO-8601 instant or null for none; both null if not held) and fixed expiry (epoch ms, null if unknown).
     */
    public record HoldView(String volume, long sequence, boolean held, Long expiryMillis, String lockMode, String lockUntil,
                           String lockedBy) {
    }

    /** Body of a lock request: {@code {"mode": "compliance", "until": "2027-01-01T00:00:00Z"}}; until is optional for governance. */
    public record LockRequest(String mode, String until) {
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

    /** Starts reclaim-now (an exact mark, then frees what nothing retained references) as a job. */
    @PostMapping("/api/v1/gc/reclaim")
    @Audited("gc.reclaim")
    public ResponseEntity<JobView> reclaim(HttpServletRequest request) {
        return JobController.accepted(gcJobs.reclaim(Principals.name(request)));
    }

    @GetMapping("/api/v1/gc/status")
    public GcStatus status() {
        return new GcStatus(gc.lastCycle(), gc.pipeline().queuedUpdates(), gc.lastAppliedOp(), gc.compactionTotals());
    }

    /** Starts the independent check as a job; it reads every retained snapshot, so it takes a while on a big store. */
    @PostMapping("/api/v1/gc/fsck")
    @Audited("gc.fsck")
    public ResponseEntity<JobView> fsck(HttpServletRequest request) {
        return JobController.accepted(gcJobs.fsck(Principals.name(request)));
    }

    @GetMapping("/api/v1/volumes/{name}/retention")
    public RetentionView retention(@PathVariable String name) {
        return new RetentionView(gc.policy(volumeId(name)));
    }

    @PutMapping("/api/v1/volumes/{name}/retention")
    @Audited("retention.set")
    public RetentionView setRetention(@PathVariable String name, @RequestBody RetentionView body) {
        if (body == null || body.policy() == null) {
            throw new IllegalArgumentException("body must be {\"policy\": \"30d\"} or a schedule like \"keep-last=3,daily=7\"");
        }
        VolumeId v = volumeId(name);
        gc.setPolicy(v, body.policy());
        return new RetentionView(gc.policy(v));
    }

    @GetMapping("/api/v1/volumes/{name}/snapshots/{sequence}/hold")
    public HoldView hold(@PathVariable String name, @PathVariable long sequence) {
        VolumeId v = volumeId(name);
        RetentionLocks.Lock l = gc.locks().lock(v, sequence).orElse(null);
        return new HoldView(name, sequence, l != null, gc.expiry(v, sequence).orElse(null),
                l == null ? null : l.mode().wireName(),
                l == null || l.untilMillis() == null ? null : Instant.ofEpochMilli(l.untilMillis()).toString(),
                l == null ? null : l.placedBy());
    }

    /** Places a hold (legal hold: a governance lock without date): the snapshot is kept until an admin releases it. */
    @PutMapping("/api/v1/volumes/{name}/snapshots/{sequence}/hold")
    @Audited("hold.place")
    public HoldView placeHold(@PathVariable String name, @PathVariable long sequence, HttpServletRequest request) {
        gc.locks().place(volumeId(name), sequence, RetentionLocks.Mode.GOVERNANCE, null, Principals.name(request));
        return hold(name, sequence);
    }

    /** Releases a hold or governance lock (admin only); 409 for a compliance lock before its date. */
    @DeleteMapping("/api/v1/volumes/{name}/snapshots/{sequence}/hold")
    @Audited("hold.release")
    public HoldView releaseHold(@PathVariable String name, @PathVariable long sequence, HttpServletRequest request) {
        Principals.requireAdmin(request, "releasing a hold");
        gc.locks().release(volumeId(name), sequence);
        return hold(name, sequence);
    }

    @GetMapping("/api/v1/volumes/{name}/snapshots/{sequence}/lock")
    public HoldView lock(@PathVariable String name, @PathVariable long sequence) {
        return hold(name, sequence);
    }

    /** Places or extends a retention lock; 409 if it would shorten or weaken the lock there. */
    @PutMapping("/api/v1/volumes/{name}/snapshots/{sequence}/lock")
    @Audited("lock.place")
    public HoldView placeLock(@PathVariable String name, @PathVariable long sequence, @RequestBody LockRequest body,
                              HttpServletRequest request) {
        if (body == null || body.mode() == null) {
            throw new IllegalArgumentException("body must be {\"mode\": \"governance\"|\"compliance\", \"until\": \"2027-01-01T00:00:00Z\"}");
        }
        Long until = null;
        if (body.until() != null && !body.until().isBlank()) {
            try {
                until = Instant.parse(body.until().trim()).toEpochMilli();
            } catch (DateTimeParseException | ArithmeticException e) { // ArithmeticException: a year past epoch millis
                throw new IllegalArgumentException("until '" + body.until() + "' is not an ISO-8601 instant like 2027-01-01T00:00:00Z");
            }
        }
        RetentionLocks.Mode mode = RetentionLocks.Mode.parse(body.mode());
        if (mode == RetentionLocks.Mode.COMPLIANCE) {
            // nobody can undo a compliance lock: a stolen operator credential must not be able to pin the store for years
            Principals.requireAdmin(request, "placing a compliance lock");
        }
        gc.locks().place(volumeId(name), sequence, mode, until, Principals.name(request));
        return hold(name, sequence);
    }

    /** Releases a governance lock (admin only); a compliance lock cannot be released before its date (409). */
    @DeleteMapping("/api/v1/volumes/{name}/snapshots/{sequence}/lock")
    @Audited("lock.release")
    public HoldView releaseLock(@PathVariable String name, @PathVariable long sequence, HttpServletRequest request) {
        Principals.requireAdmin(request, "releasing a lock");
        gc.locks().release(volumeId(name), sequence);
        return hold(name, sequence);
    }

    private static VolumeId volumeId(String name) {
        if (!VolumeId.isValid(name)) {
            throw new UnknownVolumeException(name);
        }
        return new VolumeId(name);
    }
}
