package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.bookkeeping.UpdateRouter;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;

/**
 * A master's GC bookkeeping with its blocks on workers (distributed GC, thesis 7.2.4;
 * {@code holdfast.cluster.data=workers}): each operation's updates ({@link GcBookkeeper#updatesOf})
 * are split by PBN range ({@link UpdateRouter}) over the master's own range and each worker's; the
 * workers' shares go to the outbox, the master's own share to its BOSC log, in this order:
 * <ol>
 * <li>every worker's non-empty share, as {@code GC_DELTA} parts of at most 65,536 updates, into
 * the outbox ({@link GcOutbox}), with the worker's routed mark raised to its last part, in one
 * synced catalog batch (so the mark is durable before any of those parts can be acknowledged);</li>
 * <li>then the master's own share as BOSC group {@code opId}, always, empty if the share is: the
 * group is what advances {@link #lastAppliedOp()};</li>
 * <li>then the carrier ({@link GcRouting#outboxWritten}) is told; it sends from the outbox on its
 * own thread, so a commit never waits for a worker.</li>
 * </ol>
 *
 * <h2>Why a crash anywhere loses and doubles nothing</h2>
 * The operation's record is durable in the catalog before this runs (the {@link OperationLog}
 * rule). At open, every operation above the master's {@link #lastAppliedOp()} is routed again
 * ({@link CrashRecovery}). (a) A crash before step 1's batch is durable: nothing of the operation
 * is anywhere; the re-drive routes it whole. (b) Between step 1 and a durable step 2: the outbox
 * holds the shares, the master's log not its group; the re-drive writes the same keys again (the
 * shares of the operation as the catalog gives it, the one a standalone re-drive would log), so the
 * outbox holds one entry per key, and the master's group is logged; a worker that got the first
 * writing already takes the second for a replay. (c) After step 2 is durable: the operation is at or below the mark and never routed
 * again; its shares were durable in the outbox before it (step 1 is synced first). So every
 * operation the catalog holds reaches every owner's outbox entry and the master's log exactly once
 * as a key. A worker logs each delta id once (a delta at or below its log's last id is a replay
 * and logs nothing), so the outbox entries re-written by (b), or sent again after a lost
 * acknowledgement, count once on the worker too. The sender deletes an entry only once the worker
 * acknowledged it (after its log is synced), so an entry is never lost before it is durable on its
 * owner. Delta ids grow with operation ids, which are handed to this class in order under the
 * commit monitor, and the outbox is read in key order: a worker sees its deltas in order, so its
 * once-only rule never mistakes a new delta for a replay.
 *
 * <p>An update of a PBN in no known range (a stale membership, a corrupt delta) refuses the whole
 * operation before anything is written ({@link UpdateRouter#route}): no outbox entry, no group;
 * the {@link OperationLog} pauses GC with the error, and the record waits in the catalog.
 *
 * <p>Lock: {@link #apply} runs under the commit monitor (or at open), synchronized here too; the
 * router is rebuilt when the membership's ranges change (a worker registered).
 */
final class RoutedBookkeeping implements GcBookkeeping {
    private static final System.Logger LOG = System.getLogger(RoutedBookkeeping.class.getName());
    private final BoscPipeline pipeline;
    private final GcOutbox outbox;
    private final GcRouting routing;
    /** Tests: runs after the outbox batch is durable, before the master's own group is logged (a crash there). */
    private Runnable afterOutbox = () -> {
    };
    private SortedMap<Long, PbnRange> routedOver;
    private long[] workerIds;
    private UpdateRouter router;
    private UpdateBatch[] shares;
    /** Each worker's routed mark as last put (read from the outbox once; -1: none there), so a put needs no read. */
    private final Map<Long, Long> routedMarks = new java.util.HashMap<>();

    RoutedBookkeeping(BoscPipeline pipeline, GcOutbox outbox, GcRouting routing) {
        this.pipeline = pipeline;
        this.outbox = outbox;
        this.routing = routing;
    }

    @Override
    public long lastAppliedOp() {
        return pipeline.lastOpId();
    }

    @Override
    public synchronized void apply(long opId, GcOperation op) {
        if (opId <= pipeline.lastOpId()) {
            return; // the master's group is logged: its shares were in the outbox before it
        }
        UpdateBatch all = GcBookkeeper.updatesOf(op);
        route(opId, all);
        List<Long> written = new ArrayList<>();
        try (MetadataBatch batch = new MetadataBatch()) {
            for (int d = 1; d < shares.length; d++) {
                if (shares[d].size() > 0) {
                    long w = workerIds[d - 1];
                    int parts = putParts(batch, w, opId, shares[d]);
                    putRoutedMark(batch, w, GcDelta.deltaId(opId, parts - 1));
                    written.add(w);
                }
            }
            if (!written.isEmpty()) {
                outbox.writeSynced(batch);
            }
        }
        afterOutbox.run();
        pipeline.appendGroup(opId, shares[0]);
        for (long w : written) {
            routing.outboxWritten(w);
        }
    }

    /** Splits {@code all} into {@link #shares} by the membership's ranges now (the master's own first). */
    private void route(long opId, UpdateBatch all) {
        SortedMap<Long, PbnRange> ranges = routing.workerRanges();
        if (router == null || !ranges.equals(routedOver)) {
            List<PbnRange> list = new ArrayList<>();
            list.add(routing.ownRange());
            long[] ids = new long[ranges.size()];
            int i = 0;
            for (Map.Entry<Long, PbnRange> e : ranges.entrySet()) {
                ids[i++] = e.getKey();
                list.add(e.getValue());
            }
            router = new UpdateRouter(list);
            workerIds = ids;
            routedOver = new TreeMap<>(ranges);
            shares = new UpdateBatch[list.size()];
            for (int d = 0; d < shares.length; d++) {
                shares[d] = new UpdateBatch();
            }
        }
        router.route(opId, all, shares); // refuses before any share is filled
    }

    /**
     * Raises worker {@code w}'s routed mark to {@code deltaId} in the same batch as the entries it
     * covers (never lowers it: a re-drive writes an operation's keys again, never an older one's).
     */
    private void putRoutedMark(MetadataBatch batch, long w, long deltaId) {
        long mark = Math.max(deltaId, routedMarks.computeIfAbsent(w, this::storedRoutedMark));
        // put every time, also an equal mark: if this batch fails, the re-drive's batch must carry it again
        outbox.putRoutedMark(batch, w, mark);
        routedMarks.put(w, mark);
    }

    /**
     * Worker {@code w}'s routed mark in the outbox, -1 if none. An unreadable one is overwritten, not
     * fatal: every delta routed before it has a lower id than the one being put now, so the new mark
     * is right; pausing GC for a value only worker-fsck reads would do more harm.
     */
    private long storedRoutedMark(long w) {
        try {
            return outbox.routedMark(w).orElse(-1);
        } catch (CorruptDataException e) {
            LOG.log(System.Logger.Level.WARNING, e.getMessage() + " (overwritten with the mark of the delta routed now)");
            return -1;
        }
    }

    /** One outbox entry per {@code GC_DELTA} part ({@link GcDeltaParts}); returns how many parts. */
    private int putParts(MetadataBatch batch, long workerId, long opId, UpdateBatch share) {
        GcDelta[] parts = GcDeltaParts.of(opId, share);
        for (GcDelta d : parts) {
            outbox.put(batch, workerId, d);
        }
        return parts.length;
    }

    /** Tests: what runs between the durable outbox batch and the master's own group. */
    void afterOutbox(Runnable hook) {
        this.afterOutbox = hook;
    }
}
