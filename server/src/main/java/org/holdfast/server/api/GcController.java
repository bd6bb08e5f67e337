package org.holdfast.server.api;

import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.UnknownVolumeException;
import java.net.URI;
import org.holdfast.server.gc.GcConflictException;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Garbage collection: runs on demand, status, fsck, retention policies and holds. */
@RestController
public class GcController {
    /** Problem type of a refused GC request (backup in progress, hold, newest snapshot). */
    public static final URI CONFLICT = URI.create("urn:holdfast:problem:conflict");

    private final GcService gc;
    private final VolumeGate gate;

    public GcController(GcService gc, VolumeGate gate) {
        this.gc = gc;
        this.gate = gate;
    }

    /** Status of the GC: the last run (with its compaction), the backlog of metadata updates, compaction since start. */
    public record GcStatus(GcService.CycleReport lastRun, long queuedUpdates, long lastAppliedOperation,
                           GcService.CompactionTotals compaction) {
    }

    /** A retention policy as text, e.g. {@code 30d} or {@code keep-last=3,daily=7}. */
    public record RetentionView(String policy) {
    }

    /** A snapshot's hold state and fixed expiry (epoch ms, null if unknown). */
    public record HoldView(String volume, long sequence, boolean held, Long expiryMillis) {
    }

    /** Runs retention, a sweep and compaction now; answers what it did. */
    @PostMapping("/api/v1/gc/runs")
    public GcService.CycleReport run() {
        return gc.runCycle();
    }

    @GetMapping("/api/v1/gc/status")
    public GcStatus status() {
        return new GcStatus(gc.lastCycle(), gc.pipeline().queuedUpdates(), gc.lastAppliedOp(), gc.compactionTotals());
    }

    /** The independent check; reads every retained snapshot, so it takes a while on a big store. */
    @PostMapping("/api/v1/gc/fsck")
    public FsckReport fsck() {
        return gc.fsck();
    }

    @GetMapping("/api/v1/volumes/{name}/retention")
    public RetentionView retention(@PathVariable String name) {
        return new RetentionView(gc.policy(volumeId(name)));
    }

    @PutMapping("/api/v1/volumes/{name}/retention")
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
        return new HoldView(name, sequence, gc.held(v, sequence), gc.expiry(v, sequence).orElse(null));
    }

    /** Places a hold (retention lock / legal hold): the snapshot is kept until the hold is released. */
    @PutMapping("/api/v1/volumes/{name}/snapshots/{sequence}/hold")
    public HoldView placeHold(@PathVariable String name, @PathVariable long sequence) {
        gc.placeHold(volumeId(name), sequence);
        return hold(name, sequence);
    }

    @DeleteMapping("/api/v1/volumes/{name}/snapshots/{sequence}/hold")
    public HoldView releaseHold(@PathVariable String name, @PathVariable long sequence) {
        gc.releaseHold(volumeId(name), sequence);
        return hold(name, sequence);
    }

    /**
     * Deletes a volume with all its snapshots (operator request). 409 while a backup of it is in
     * progress or any of its snapshots is held. Takes time in proportion to the volume's size.
     */
    @DeleteMapping("/api/v1/volumes/{name}")
    public GcService.VolumeDeletion deleteVolume(@PathVariable String name) {
        return gc.deleteVolume(volumeId(name), gate);
    }

    /** Deletes one snapshot before its expiry. 409 if it is held or is the volume's newest. */
    @DeleteMapping("/api/v1/volumes/{name}/snapshots/{sequence}")
    public ResponseEntity<Void> deleteSnapshot(@PathVariable String name, @PathVariable long sequence) {
        gc.deleteSnapshot(volumeId(name), sequence);
        return ResponseEntity.noContent().build();
    }

    @ExceptionHandler(GcConflictException.class)
    ProblemDetail conflict(GcConflictException e) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        p.setType(CONFLICT);
        p.setTitle("Conflict");
        return p;
    }

    private static VolumeId volumeId(String name) {
        if (!VolumeId.isValid(name)) {
            throw new UnknownVolumeException(name);
        }
        return new VolumeId(name);
    }
}
