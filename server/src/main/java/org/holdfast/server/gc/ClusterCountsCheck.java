package org.holdfast.server.gc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.holdfast.common.protocol.CountsChecked;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.gma.GmaLayout;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.UnknownWorkerException;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.jobs.JobContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The online fsck of a master whose blocks live on workers ({@code holdfast.cluster.data=workers}):
 * for each worker, the expected counts of its PBN range from the catalog ({@link CatalogCounts}, the
 * rule of the export {@code gc-rebuild --worker}), streamed to the worker in COUNTS_CHECK spans; the
 * worker compares them with its own GC metadata and answers what differs. Repairs nothing.
 *
 * <h2>The consistent point, one window at a time</h2>
 * A worker's counts are the catalog's exactly when it has logged every GC delta of every operation
 * the catalog holds, and no operation comes meanwhile. Every GC operation (commit, pin, lock, policy
 * change, a deletion's batch) is recorded and routed into the outbox under the commit monitor
 * ({@link RoutedBookkeeping}); the outbox entry of a delta is deleted only once its worker acknowledged
 * it durably logged. A worker's range is checked in windows of {@code windowPbns} PBNs, each on its
 * own: wait for the outbox to drain; take the commit monitor; require the bookkeeping healthy and
 * every operation routed; wait (briefly) for the outbox to be empty again; read the volumes and
 * snapshots afresh, count the window's PBNs from the maps, stream and compare them; release. Commits
 * and pins run between windows. Each window is exact at its own point: a PBN's counts depend only on
 * the map entries naming it and on the snapshots' records, all read under that one hold, and the
 * worker's slots were compared before any later delta could be made; a later delta changes a checked
 * PBN's counts on both sides alike, so it cannot make that window's result wrong. The job runs in the
 * GC lane, so no cycle, sweep or reclaim of this master runs beside it; the worker only applies what
 * it logged, and its own grace only raises expiries, which are not compared. Windows go up to past
 * the highest PBN the catalog references or the worker was heard handing out (its PBN floor), so an
 * over-count above the catalog's highest PBN is seen too. Each hold costs one pass over every
 * volume's map; a hold longer than {@code holdReport} is logged, and the longest is in the result.
 */
public final class ClusterCountsCheck {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterCountsCheck.class);
    /** The most PBNs one window may count (the catalog pass's arrays: 17 bytes a PBN). */
    public static final long MAX_WINDOW_PBNS = 128L * GmaFormat.PBNS_PER_CHUNK;
    // between windows: a commit that waited for the monitor gets it (a monitor is not fair: released and taken
    // again at once, the waiting commit could starve)
    private static final long GAP_MILLIS = 20;

    private final Catalog catalog;
    private final GcService gc;
    private final Supplier<Object> commitMonitor;
    private final Links links;
    private final long windowPbns;
    private final Duration drainWait;
    private final Duration holdReport;

    /** The master's links to its workers, as the check needs them. */
    public interface Links {
        /** Worker {@code workerId}'s counts check end, or null if it is not connected at cluster version 7. */
        Remote counts(long workerId);

        /** True if worker {@code workerId} is connected (at any version). */
        boolean connected(long workerId);

        /** Worker {@code workerId}'s unacknowledged outbox entries (0: every routed delta logged on it). */
        long pending(long workerId);

        /** One past the highest PBN worker {@code workerId} is known to have handed out (its PBN floor); 0: not known. */
        default long handedOutPast(long workerId) {
            return 0;
        }
    }

    /** One worker's counts check end. */
    public interface Remote {
        /** Sends one span; completes with the worker's answer, or fails if the worker is lost. */
        CompletableFuture<CountsChecked> check(long first, long limit, long now, long[] pbns, int[] rc, int[] pins, long[] et);
    }

    /** What happened to one worker: checked, or not (and why). */
    public enum State { CHECKED, NOT_CHECKED }

    /**
     * One worker's result. {@code blocksChecked}: PBNs the catalog references in its range;
     * {@code rcBelow}: the worker counts fewer references than the catalog (under-count, RISK OF LOSS: a
     * sweep may free a referenced block); {@code rcAbove}: more (over-count, a leak); {@code notHeld}:
     * blocks still needed that the worker does not hold (data loss); samples name some by PBN;
     * {@code windows}: commit-monitor holds; {@code longestHoldMillis}: the longest of them. Not checked
     * after some windows: the counts are those of the windows compared.
     */
    public record WorkerResult(long workerId, String node, String range, State state, String why, long blocksChecked, long slotsCompared,
                               long rcBelow, long rcAbove, long pinsDiffer, long notHeld, List<String> samples, long bytesSent,
                               long windows, long longestHoldMillis, long millis) {
        /** Checked, and nothing differs. */
        public boolean clean() {
            return state == State.CHECKED && rcBelow == 0 && rcAbove == 0 && pinsDiffer == 0 && notHeld == 0;
        }
    }

    /**
     * The whole check: clean only if every worker was checked and nothing differs; {@code dataLoss}: blocks not held;
     * {@code longestHoldMillis}: the longest any window held the commit monitor.
     */
    public record Report(boolean clean, boolean dataLoss, int workersChecked, int workersNotChecked, long mismatches,
                         List<WorkerResult> workers, long longestHoldMillis, long millis) {
    }

    /**
     * @param windowPbns PBNs counted and compared per hold of the commit monitor (one pass over the catalog's maps each),
     *                   1 to {@link #MAX_WINDOW_PBNS}
     * @param drainWait  how long to wait for a worker's outbox to drain before it is reported not checked
     * @param holdReport a window that holds the monitor longer is finished, and logged with its hold time
     */
    public ClusterCountsCheck(Catalog catalog, GcService gc, Supplier<Object> commitMonitor, Links links, long windowPbns,
                              Duration drainWait, Duration holdReport) {
        if (windowPbns < 1 || windowPbns > MAX_WINDOW_PBNS) {
            throw new IllegalArgumentException("a counts check window is 1 to " + MAX_WINDOW_PBNS + " PBNs, got " + windowPbns);
        }
        this.catalog = catalog;
        this.gc = gc;
        this.commitMonitor = commitMonitor;
        this.links = links;
        this.windowPbns = windowPbns;
        this.drainWait = drainWait;
        this.holdReport = holdReport;
    }

    /** Checks every worker of the membership, one after the other; {@code now} decides which expired blocks need not be held. */
    public Report run(long now, JobContext job) {
        long started = System.nanoTime();
        List<WorkerRecord> workers = new ClusterStore(catalog.db()).workers();
        job.total(workers.size(), -1);
        List<WorkerResult> out = new ArrayList<>();
        for (WorkerRecord w : workers) {
            job.checkpoint();
            WorkerResult r = check(w, now, job);
            job.log("worker " + w.workerId() + " '" + w.nodeName() + "': " + (r.state() == State.CHECKED ? r.blocksChecked()
                    + " blocks checked, " + r.rcBelow() + " RC below (risk of loss), " + r.rcAbove() + " RC above (leak), "
                    + r.pinsDiffer() + " pins differ, " + r.notHeld() + " not held" : "not checked: " + r.why()) + "; " + r.windows()
                    + " windows, commit lock held at most " + r.longestHoldMillis() + " ms");
            job.advance(1, 0);
            out.add(r);
        }
        return report(out, started);
    }

    /** Worker {@code workerId}'s membership record; {@link UnknownWorkerException} if the master has none. */
    public WorkerRecord requireWorker(long workerId) {
        return new ClusterStore(catalog.db()).workers().stream().filter(r -> r.workerId() == workerId).findFirst()
                .orElseThrow(() -> new UnknownWorkerException(workerId));
    }

    /** Checks worker {@code workerId} only (the REST call's {@code worker} parameter). */
    public Report runOne(long workerId, long now, JobContext job) {
        WorkerRecord w = requireWorker(workerId);
        long started = System.nanoTime();
        job.total(1, -1);
        WorkerResult r = check(w, now, job);
        job.advance(1, 0);
        return report(List.of(r), started);
    }

    private static Report report(List<WorkerResult> out, long started) {
        int checked = (int) out.stream().filter(r -> r.state() == State.CHECKED).count();
        long mismatches = out.stream().mapToLong(r -> r.rcBelow() + r.rcAbove() + r.pinsDiffer() + r.notHeld()).sum();
        boolean loss = out.stream().anyMatch(r -> r.notHeld() > 0);
        return new Report(out.stream().allMatch(WorkerResult::clean), loss, checked, out.size() - checked, mismatches, out,
                out.stream().mapToLong(WorkerResult::longestHoldMillis).max().orElse(0), (System.nanoTime() - started) / 1_000_000);
    }

    private WorkerResult check(WorkerRecord w, long now, JobContext job) {
        long started = System.nanoTime();
        Remote remote = links.counts(w.workerId());
        if (remote == null) {
            return new Outcome(w, null, started).notChecked(links.connected(w.workerId()) ? "needs cluster version 7: the worker"
                    + " registered at an older version (upgrade it, then check again)" : "the worker is not connected (down, or not"
                    + " registered yet): check again once it is up");
        }
        GmaLayout layout = new GmaLayout(w.range());
        Outcome o = new Outcome(w, new CountsSpanTally(remote, now, job), started);
        // past the catalog's highest PBN up to the worker's own: an over-count there (a leak) is compared too
        long limit = Math.min(Math.max(layout.base() + 1, links.handedOutPast(w.workerId())), w.range().limit());
        for (long lo = layout.base(); lo < limit; lo += windowPbns) {
            if (lo != layout.base()) {
                job.checkpoint();
                pause();
            }
            if (!drained(w.workerId(), drainWait)) {
                return o.notChecked(deltasPending(w));
            }
            long hold;
            synchronized (commitMonitor.get()) {
                long took = System.nanoTime();
                String refused = consistentPoint(w);
                if (refused != null) {
                    return o.notChecked(refused);
                }
                try {
                    limit = window(layout, w, o.tally, lo, limit);
                } catch (CountsSpanTally.WorkerLost e) {
                    return o.notChecked(e.getMessage());
                }
                hold = (System.nanoTime() - took) / 1_000_000;
            }
            o.held(hold);
            if (hold > holdReport.toMillis()) {
                String line = "worker " + w.workerId() + ": the window of PBNs from " + Math.max(lo, w.range().first()) + " held the"
                        + " commit lock for " + hold + " ms (over " + holdReport.toMillis() + " ms): commits waited that long";
                job.log(line);
                LOG.warn(line);
            }
        }
        return o.checked();
    }

    /** Null if worker {@code w}'s counts can equal the catalog's now (the monitor held), else why not. */
    private String consistentPoint(WorkerRecord w) {
        RuntimeException failure = gc.failure();
        long lastOp = catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1) - 1;
        if (failure != null || gc.lastAppliedOp() != lastOp) {
            return "GC bookkeeping is paused or has operations not yet routed to the workers (last operation " + lastOp
                    + ", routed through " + gc.lastAppliedOp() + (failure == null ? "" : ", " + failure.getMessage())
                    + "): the catalog's counts are ahead of the workers'; check again once GC resumed";
        }
        // under the monitor no delta is made: the outbox only drains now
        return drained(w.workerId(), Duration.ofSeconds(5)) ? null : deltasPending(w);
    }

    /**
     * Counts the window of PBNs [lo, lo + windowPbns) from the catalog and compares it with the worker (the
     * monitor held); returns the check's limit, raised past the highest PBN of the range the maps reference.
     */
    private long window(GmaLayout layout, WorkerRecord w, CountsSpanTally t, long lo, long limit) {
        // the volumes and snapshots are read afresh: commits, pins and deletions since the last window count as of now
        CatalogCounts counts = new CatalogCounts(catalog, layout, line -> { });
        CatalogCounts.Pass p = new CatalogCounts.Pass(lo, (int) windowPbns);
        long to = Math.min(Math.max(limit, counts.scan(p)), w.range().limit());
        long end = Math.min(lo + windowPbns, to);
        t.startAt(Math.max(lo, w.range().first()));
        for (int s = 0; s < p.flags.length && p.lo + s < end; s++) {
            if ((p.flags[s] & CatalogCounts.REFERENCED) != 0) {
                t.add(p.lo + s, p.rc[s], p.pins[s], p.et[s]);
            }
        }
        t.flush(end); // every span of the window is compared under this hold
        return to;
    }

    /** One worker's tally, windows and holds so far, made into its result. */
    private static final class Outcome {
        private final WorkerRecord w;
        private final CountsSpanTally tally;
        private final long started;
        private long windows;
        private long longest;

        Outcome(WorkerRecord w, CountsSpanTally tally, long started) {
            this.w = w;
            this.tally = tally;
            this.started = started;
        }

        void held(long millis) {
            windows++;
            longest = Math.max(longest, millis);
        }

        WorkerResult checked() {
            return result(State.CHECKED, null);
        }

        WorkerResult notChecked(String why) {
            return result(State.NOT_CHECKED, windows == 0 ? why : why + " (stopped after " + windows + " windows; what differed in"
                    + " those is counted)");
        }

        private WorkerResult result(State state, String why) {
            CountsSpanTally t = tally;
            long millis = (System.nanoTime() - started) / 1_000_000;
            return t == null ? new WorkerResult(w.workerId(), w.nodeName(), w.range().toString(), state, why, 0, 0, 0, 0, 0, 0, List.of(),
                    0, 0, 0, millis) : new WorkerResult(w.workerId(), w.nodeName(), w.range().toString(), state, why, t.blocks, t.compared,
                    t.rcBelow, t.rcAbove, t.pinsDiffer, t.notHeld, List.copyOf(t.samples), t.bytes, windows, longest, millis);
        }
    }

    private static void pause() {
        try {
            Thread.sleep(GAP_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean drained(long workerId, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        long sleep = 10;
        while (links.pending(workerId) != 0) {
            if (System.nanoTime() >= deadline) {
                return false;
            }
            try {
                Thread.sleep(sleep);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            sleep = Math.min(500, sleep * 2);
        }
        return true;
    }

    private String deltasPending(WorkerRecord w) {
        return links.pending(w.workerId()) + " GC deltas routed to it are not acknowledged yet (a slow or reconnecting worker):"
                + " its counts cannot be compared with the catalog's; check again later";
    }
}
