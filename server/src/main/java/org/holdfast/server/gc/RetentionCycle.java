package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.retention.RetentionPlanner;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.gc.sweep.SweepReport;
import org.holdfast.gc.sweep.Sweeper;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.MetadataBatch;

/**
 * One GC cycle: lapse the locks whose date has passed; for each volume, plan retention, release
 * keep-last pins of snapshots that left the window (while they still exist), place pins for those
 * that need them, make the log durable, delete the expired snapshots and the map entries no
 * retained snapshot needs; trim the operation records the log has; sweep with the same {@code now}.
 * Then compaction.
 *
 * <p>Locks: everything up to the sweep runs under the cycle lock (shared with {@link Deletions}),
 * so one cycle runs at a time and no deletion interleaves. The snapshot deletions run under the
 * commit monitor, where holds are checked again (a hold may arrive after the plan was made) and the
 * expiries commits read are changed. Compaction runs outside the cycle lock, so holds and deletions
 * are not kept waiting.
 *
 * <p>As a job: one item per volume, one for the sweep, one for compaction, a log line per phase.
 * Safe points (where a cancelled cycle stops) are before each volume, before the sweep and before
 * compaction: each volume's deletions are complete batches, and a skipped sweep or compaction is
 * only done by the next cycle.
 */
final class RetentionCycle {
    private final Catalog catalog;
    private final GcRecords records;
    private final VolumeStates states;
    private final Pins pins;
    private final RetentionLocks locks;
    private final OperationLog ops;
    private final BoscPipeline pipeline;
    private final GcBookkeeper bookkeeper;
    private final GraceGuard guard;
    private final Sweeper sweeper;
    private final CompactionCounters compaction;
    private final Object cycleLock;
    private final Supplier<Object> commitMonitor;
    private final RetentionPlanner planner = new RetentionPlanner();
    private volatile GcService.CycleReport last;
    private volatile RangeOwnerSweeps owners = RangeOwnerSweeps.NONE;

    RetentionCycle(Catalog catalog, GcRecords records, VolumeStates states, Pins pins, RetentionLocks locks, OperationLog ops,
                   BoscPipeline pipeline, GcBookkeeper bookkeeper, GraceGuard guard, Sweeper sweeper,
                   CompactionCounters compaction, Object cycleLock, Supplier<Object> commitMonitor) {
        this.catalog = catalog;
        this.records = records;
        this.states = states;
        this.pins = pins;
        this.locks = locks;
        this.ops = ops;
        this.pipeline = pipeline;
        this.bookkeeper = bookkeeper;
        this.guard = guard;
        this.sweeper = sweeper;
        this.compaction = compaction;
        this.cycleLock = cycleLock;
        this.commitMonitor = commitMonitor;
    }

    /** Runs retention, a sweep and compaction as of {@code now}, reporting to {@code job}. */
    GcService.CycleReport run(long now, JobContext job) {
        GcService.CycleReport swept = retainAndSweep(now, job);
        job.checkpoint();
        // outside the cycle lock: a worker's sweep may take minutes, and deletions need not wait for it
        RuntimeException paused = ops.failure();
        if (paused != null && owners != RangeOwnerSweeps.NONE) {
            // an operation of this cycle (or a commit meanwhile) was not routed: its record waits in the catalog, not in
            // the outbox, so a worker's drained outbox no longer means its GC metadata holds every reference the catalog has
            job.log("worker sweeps: none asked, GC bookkeeping paused during this cycle (" + paused.getMessage() + "); the next"
                    + " cycle asks once it resumes");
        } else {
            for (String line : owners.sweep(now)) {
                job.log(line);
            }
        }
        job.checkpoint();
        job.log("compaction: rewriting sealed data logs whose live share is below the threshold");
        GcService.CompactionReport c = compaction.compact();
        job.advance(1, 0);
        job.log(c == null ? "compaction: off (threshold 0)" : "compaction: " + c.logsExamined() + " logs examined, "
                + c.logsRewritten() + " rewritten, " + c.logsDeleted() + " deleted, " + c.bytesReclaimed() + " bytes reclaimed");
        GcService.CycleReport r = new GcService.CycleReport(swept.now(), swept.snapshotsDeleted(), swept.mapEntriesPruned(),
                swept.pinsPlaced(), swept.pinsReleased(), swept.sweep(), c);
        last = r;
        return r;
    }

    /** The owners of other PBN ranges that sweep after this cycle's own sweep (data on workers). */
    void sweepOwnersWith(RangeOwnerSweeps owners) {
        this.owners = owners;
    }

    /** The last cycle's report, or null before the first. */
    GcService.CycleReport last() {
        return last;
    }

    private GcService.CycleReport retainAndSweep(long now, JobContext job) {
        ops.requireHealthy();
        synchronized (cycleLock) {
            locks.lapse(now); // a lapsed lock's snapshot expires in this same cycle
            int deleted = 0;
            long pruned = 0;
            int pinned = 0;
            int released = 0;
            List<VolumeRecord> volumes = catalog.volumes();
            job.total(volumes.size() + 2L, -1);
            job.log("retention: planning " + volumes.size() + " volumes as of " + java.time.Instant.ofEpochMilli(now));
            for (VolumeRecord v : volumes) {
                job.checkpoint();
                job.advance(1, 0);
                VolumeStates.State g = states.of(v);
                List<GcRecords.SnapshotGc> gcs = records.snapshots(v.internalId());
                Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
                for (GcRecords.SnapshotGc s : gcs) {
                    gc.put(s.sequence(), s);
                }
                List<RetentionPlanner.SnapshotState> plannerStates = new ArrayList<>();
                for (SnapshotRecord s : catalog.snapshots(v)) {
                    GcRecords.SnapshotGc sg = gc.getOrDefault(s.sequence(), new GcRecords.SnapshotGc(s.sequence(), Long.MAX_VALUE, 0));
                    plannerStates.add(new RetentionPlanner.SnapshotState(s.sequence(), sg.expiry(), sg.held(), sg.keepLastPinned()));
                }
                RetentionPlanner.Plan plan = planner.plan(plannerStates, g.policy.keepLast(), now);
                for (long seq : plan.releaseKeepLastPin()) {
                    released += pins.releaseKeepLast(v.name(), seq) ? 1 : 0;
                }
                for (long seq : plan.pinForKeepLast()) {
                    pinned += pins.change(v.name(), seq, GcRecords.KEEP_LAST_PINNED, true, b -> { }) ? 1 : 0;
                }
                if (plan.delete().isEmpty()) {
                    continue;
                }
                // every operation naming these snapshots must be in the GC log before they go
                pipeline.awaitDurable();
                List<Long> gone = new ArrayList<>();
                synchronized (commitMonitor.get()) {
                    Map<Long, GcRecords.SnapshotGc> now2 = new HashMap<>();
                    for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                        now2.put(s.sequence(), s);
                    }
                    try (MetadataBatch batch = new MetadataBatch()) {
                        for (long seq : plan.delete()) {
                            GcRecords.SnapshotGc sg = now2.get(seq);
                            if (sg != null && (sg.held() || sg.keepLastPinned() || sg.expiry() > now)) {
                                continue; // a hold, or a policy change that raised its expiry, arrived after the plan was made
                            }
                            catalog.deleteSnapshot(batch, v, seq);
                            records.deleteSnapshot(batch, v.internalId(), seq);
                            gone.add(seq);
                        }
                        catalog.write(batch);
                    }
                    // RangeMaxExpiry is read by commits, which hold this monitor
                    for (long seq : gone) {
                        g.expiries.remove(seq);
                    }
                }
                deleted += gone.size();
                locks.expired(v, gone, now);
                pruned += MapPruner.prune(catalog, v);
            }
            job.log("retention: " + deleted + " snapshots deleted, " + pruned + " map entries pruned, " + pinned
                    + " keep-last pins placed, " + released + " released");
            job.checkpoint();
            // ids appended before the barrier are durable after it; later ones must stay
            long durableOp = bookkeeper.lastAppliedOp();
            pipeline.awaitDurable();
            ops.trimUpTo(durableOp);
            job.log("sweep: freeing unreferenced, expired, unpinned blocks");
            SweepReport sweep = sweeper.sweep(guard.sweepHorizon(now)); // open backups keep their protection
            job.advance(1, 0);
            job.log("sweep: " + sweep.chunksScanned() + " GMA chunks scanned, " + sweep.freed() + " blocks freed, "
                    + sweep.keptUnexpired() + " kept unexpired, " + sweep.keptPinned() + " kept pinned");
            return new GcService.CycleReport(now, deleted, pruned, pinned, released, sweep, null);
        }
    }
}
