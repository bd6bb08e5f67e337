package org.holdfast.server.api;

import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.gc.GcService;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Garbage collection: runs on demand, status and fsck (retention policies: {@link RetentionController};
 * holds and locks: {@link SnapshotController}).
 */
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
}
