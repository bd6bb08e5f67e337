package org.holdfast.server.gc;

import java.time.Clock;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.gc.sweep.Sweeper;
import org.holdfast.gc.sweep.UnmarkedSweepListener;
import org.holdfast.gc.sweep.UnmarkedSweepReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.StoredBlock;

/**
 * Reclaim-now: frees, at an operator's request, every block no retained snapshot references, without
 * waiting for the expiry the hybrid bookkeeping gave it.
 *
 * <h2>Why a separate mode</h2>
 * The expiry sweep knows per PBN only RC and ET, the maximum expiry of the snapshots that ever
 * dereferenced it. When those snapshots are deleted early (an operator's snapshot or volume
 * deletion), ET cannot be lowered safely (another, retained snapshot may have raised it too), so
 * the block waits for an expiry nobody needs any more, up to a year under {@code monthly=12}. Only a
 * full mark can tell such a block from one a retained snapshot still needs; its cost is a scan of
 * every retained snapshot, O(catalog) rather than O(change), so it runs on demand, not every cycle.
 *
 * <h2>Steps</h2>
 * Under the cycle lock (no cycle, no deletion, no other reclaim-now meanwhile; commits, holds and
 * restores go on):
 * <ol>
 * <li>open the {@link GraceGuard.Watch}: from now on every PBN a backup session protected or
 *     protects is kept, including sessions that commit during the run;</li>
 * <li>{@link ExactMark}: every snapshot the catalog holds (held, locked, pinned or not yet expired
 *     alike) marks its PBNs; a snapshot committed after this point is covered by the watch;</li>
 * <li>checkpoint (nothing changed yet);</li>
 * <li>{@link Sweeper#sweepUnmarked}: batch by batch, the same stripes, barrier, tombstones,
 *     {@link StoreReclaimer} (fingerprint index, locations, possession entries) and FREED marks as a
 *     sweep; a checkpoint after each batch;</li>
 * <li>close the watch, release the cycle lock, then compact so the space goes back to the file
 *     system: as a cycle does, but at the higher reclaim threshold, so a mostly live log that a
 *     failed backup's blocks made partly dead is rewritten too.</li>
 * </ol>
 *
 * <h2>Crash safety</h2>
 * Nothing is written before the free step, and the free step writes exactly what a sweep writes,
 * in the same order. A SIGKILL leaves at worst PBNs whose blocks are gone but whose GMA slot is not
 * yet FREED: no snapshot references them, fsck does not count them, and the next reclaim-now (or
 * the sweep, at their old expiry) hands them over again, which the reclaimer accepts.
 */
final class ReclaimNow {
    private final Catalog catalog;
    private final DataStore dataStore;
    private final GcRecords records;
    private final OperationLog ops;
    private final GraceGuard guard;
    private final Sweeper sweeper;
    private final CompactionCounters compaction;
    private final Object cycleLock;
    private final Clock clock;

    ReclaimNow(Catalog catalog, DataStore dataStore, GcRecords records, OperationLog ops, GraceGuard guard, Sweeper sweeper,
               CompactionCounters compaction, Object cycleLock, Clock clock) {
        this.catalog = catalog;
        this.dataStore = dataStore;
        this.records = records;
        this.ops = ops;
        this.guard = guard;
        this.sweeper = sweeper;
        this.compaction = compaction;
        this.cycleLock = cycleLock;
        this.clock = clock;
    }

    /**
     * Marks, frees, then compacts (at {@code compactionThreshold} if present, else the setting); see
     * the class comment. Throws {@code JobCancelledException} at a safe point if asked to stop.
     */
    GcService.ReclaimReport run(JobContext job, java.util.OptionalDouble compactionThreshold) {
        ops.requireHealthy();
        long started = System.nanoTime();
        ExactMark.Result mark;
        UnmarkedSweepReport swept;
        long[] bytes = {0};
        synchronized (cycleLock) {
            try (GraceGuard.Watch inFlight = guard.watch()) {
                long allocated = Math.max(0, dataStore.nextPbn() - dataStore.range().first()); // PBNs handed out so far
                job.log("reclaim-now: marking the blocks of every retained snapshot");
                mark = ExactMark.run(new CatalogFsck(catalog, dataStore, records), dataStore.range().first(), job, allocated);
                job.log("reclaim-now: " + mark.snapshots() + " snapshots mark " + mark.live().count() + " blocks live; "
                        + inFlight.size() + " blocks protected by backups in progress");
                job.checkpoint();
                StoredBlock scratch = new StoredBlock();
                long[] advanced = {0};
                long[] bytesReported = {0};
                swept = sweeper.sweepUnmarked(mark.live(), inFlight, clock.millis(), new UnmarkedSweepListener() {
                    @Override
                    public void freeing(long[] pbns) {
                        for (long p : pbns) {
                            if (dataStore.fingerprint(p, scratch)) {
                                bytes[0] += scratch.storedLength();
                            }
                        }
                    }

                    @Override
                    public void batchDone(long examined, long freed) {
                        long items = Math.min(examined, allocated - advanced[0]);
                        advanced[0] += items;
                        job.advance(items, bytes[0] - bytesReported[0]);
                        bytesReported[0] = bytes[0];
                        KillPoints.hit(KillPoints.RECLAIM_AFTER_FREE_BATCH);
                        job.checkpoint();
                    }
                });
                job.advance(allocated - advanced[0], 0); // PBNs the GMA never knew (never protected nor committed)
            }
        }
        job.log("reclaim-now: freed " + swept.freed() + " blocks (" + bytes[0] + " bytes stored); kept " + swept.keptMarked()
                + " referenced, " + swept.keptInFlight() + " of backups in progress, " + swept.keptPinned() + " pinned");
        GcService.CompactionReport c = compaction.compactForReclaim(compactionThreshold);
        if (c != null) {
            job.log("reclaim-now: compaction (logs under " + c.threshold() + " live) rewrote " + c.logsRewritten()
                    + " and deleted " + c.logsDeleted() + " data logs, " + c.bytesReclaimed() + " bytes back to the file system");
            if (c.logsDeferred() > 0) {
                job.log("reclaim-now: deferred " + c.logsDeferred() + " data logs (" + c.logsTrimmed() + " of them trimmed of"
                        + " their dead tails): rewriting them copies " + c.bytesDeferred() + " live bytes, more than this run could"
                        + " (holdfast.gc.compaction-max-bytes, or free space above a quarter of holdfast.store.min-free-space);"
                        + " free more space, then run reclaim-now again");
            }
        }
        return new GcService.ReclaimReport(mark.snapshots(), mark.live().count(), swept.freed(), bytes[0],
                (System.nanoTime() - started) / 1_000_000, swept.examined(), swept.keptInFlight(), c);
    }
}
