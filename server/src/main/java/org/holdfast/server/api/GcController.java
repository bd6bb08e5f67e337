package org.holdfast.server.api;

import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.gc.GcService;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Garbage collection: runs on demand, status, fsck and retention policies (holds and locks: {@link SnapshotController}). */
@RestController
@NeedsGcBookkeeping
public class GcController {
    private final GcService gc;

    public GcController(GcService gc) {
        this.gc = gc;
    }

    /** Status of the GC: the last run (with its compaction), the backlog of metadata updates, compaction since start. */
    public record GcStatus(GcService.CycleReport lastRun, long queuedUpdates, long lastAppliedOperation,
                           GcService.CompactionTotals compaction) {
    }

    /** A retention policy as text, e.g. {@code 30d} or {@code keep-last=3,daily=7}. */
    public record RetentionView(String policy) {
    }

    /** Runs retention, a sweep and compaction now; answers what it did. */
    @PostMapping("/api/v1/gc/runs")
    @Audited("gc.run")
    public GcService.CycleReport run() {
        return gc.runCycle();
    }

    @GetMapping("/api/v1/gc/status")
    public GcStatus status() {
        return new GcStatus(gc.lastCycle(), gc.pipeline().queuedUpdates(), gc.lastAppliedOp(), gc.compactionTotals());
    }

    /** The independent check; reads every retained snapshot, so it takes a while on a big store. */
    @PostMapping("/api/v1/gc/fsck")
    @Audited("gc.fsck")
    public FsckReport fsck() {
        return gc.fsck();
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

    private static VolumeId volumeId(String name) {
        if (!VolumeId.isValid(name)) {
            throw new UnknownVolumeException(name);
        }
        return new VolumeId(name);
    }
}
