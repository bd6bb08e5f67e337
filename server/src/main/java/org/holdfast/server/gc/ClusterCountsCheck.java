package org.holdfast.server.gc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.holdfast.common.protocol.CountsCheck;
import org.holdfast.common.protocol.CountsChecked;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.gma.GmaLayout;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.UnknownWorkerException;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.jobs.JobContext;

/**
 * The online fsck of a master whose blocks live on workers ({@code holdfast.cluster.data=workers}):
 * for each worker, the expected counts of its PBN range from the catalog ({@link CatalogCounts}, the
 * rule of the export {@code gc-rebuild --worker}), streamed to the worker in COUNTS_CHECK spans; the
 * worker compares them with its own GC metadata and answers what differs. Repairs nothing.
 *
 * <h2>The consistent point</h2>
 * A worker's counts are the catalog's exactly when it has logged every GC delta of every operation
 * the catalog holds, and no operation comes meanwhile. Every GC operation (commit, pin, lock, policy
 * change, a deletion's batch) is recorded and routed into the outbox under the commit monitor
 * ({@link RoutedBookkeeping}); the outbox entry of a delta is deleted only once its worker acknowledged
 * it durably logged. So, per worker: wait for its outbox to drain; take the commit monitor; require
 * the bookkeeping healthy and every operation routed (the master's last applied operation is the
 * counter's last: none left to a re-drive); wait (briefly) for the outbox to be empty again; then
 * count and stream while holding the monitor, so no new delta can be made. The job runs in the GC
 * lane, so no cycle, sweep or reclaim of this master runs beside it; the worker only applies what
 * it logged (a barrier, then each chunk brought up to date as it is read), and its own grace only
 * raises expiries, which are not compared. Cost: commits and pins wait while one worker's range is
 * counted (one pass over the maps per {@code passChunks} GMA chunks): a backup's commit is delayed,
 * not failed.
 */
public final class ClusterCountsCheck {
    private final Catalog catalog;
    private final GcService gc;
    private final Supplier<Object> commitMonitor;
    private final Links links;
    private final int passChunks;
    private final Duration drainWait;

    /** The master's links to its workers, as the check needs them. */
    public interface Links {
        /** Worker {@code workerId}'s counts check end, or null if it is not connected at cluster version 7. */
        Remote counts(long workerId);

        /** True if worker {@code workerId} is connected (at any version). */
        boolean connected(long workerId);

        /** Worker {@code workerId}'s unacknowledged outbox entries (0: every routed delta logged on it). */
        long pending(long workerId);
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
     * blocks still needed that the worker does not hold (data loss); samples name some by PBN.
     */
    public record WorkerResult(long workerId, String node, String range, State state, String why, long blocksChecked, long slotsCompared,
                               long rcBelow, long rcAbove, long pinsDiffer, long notHeld, List<String> samples, long bytesSent,
                               long millis) {
        /** Checked, and nothing differs. */
        public boolean clean() {
            return state == State.CHECKED && rcBelow == 0 && rcAbove == 0 && pinsDiffer == 0 && notHeld == 0;
        }
    }

    /** The whole check: clean only if every worker was checked and nothing differs; {@code dataLoss}: blocks not held. */
    public record Report(boolean clean, boolean dataLoss, int workersChecked, int workersNotChecked, long mismatches,
                         List<WorkerResult> workers, long millis) {
    }

    /**
     * @param passChunks GMA chunks (8191 PBNs each) counted per pass over the catalog's maps
     * @param drainWait  how long to wait for a worker's outbox to drain before it is reported not checked
     */
    public ClusterCountsCheck(Catalog catalog, GcService gc, Supplier<Object> commitMonitor, Links links, int passChunks,
                              Duration drainWait) {
        this.catalog = catalog;
        this.gc = gc;
        this.commitMonitor = commitMonitor;
        this.links = links;
        this.passChunks = passChunks;
        this.drainWait = drainWait;
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
                    + r.pinsDiffer() + " pins differ, " + r.notHeld() + " not held" : "not checked: " + r.why()));
            job.advance(1, 0);
            out.add(r);
        }
        int checked = (int) out.stream().filter(r -> r.state() == State.CHECKED).count();
        long mismatches = out.stream().mapToLong(r -> r.rcBelow() + r.rcAbove() + r.pinsDiffer() + r.notHeld()).sum();
        boolean loss = out.stream().anyMatch(r -> r.notHeld() > 0);
        return new Report(out.stream().allMatch(WorkerResult::clean), loss, checked, out.size() - checked, mismatches, out,
                (System.nanoTime() - started) / 1_000_000);
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
        return new Report(r.clean(), r.notHeld() > 0, r.state() == State.CHECKED ? 1 : 0, r.state() == State.CHECKED ? 0 : 1,
                r.rcBelow() + r.rcAbove() + r.pinsDiffer() + r.notHeld(), List.of(r), (System.nanoTime() - started) / 1_000_000);
    }

    private WorkerResult check(WorkerRecord w, long now, JobContext job) {
        long started = System.nanoTime();
        Remote remote = links.counts(w.workerId());
        if (remote == null) {
            return notChecked(w, links.connected(w.workerId()) ? "needs cluster version 7: the worker registered at an older version"
                    + " (upgrade it, then check again)" : "the worker is not connected (down, or not registered yet): check again once"
                    + " it is up", started);
        }
        if (!drained(w.workerId(), drainWait)) {
            return notChecked(w, deltasPending(w), started);
        }
        synchronized (commitMonitor.get()) {
            RuntimeException failure = gc.failure();
            long lastOp = catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1) - 1;
            if (failure != null || gc.lastAppliedOp() != lastOp) {
                return notChecked(w, "GC bookkeeping is paused or has operations not yet routed to the workers (last operation " + lastOp
                        + ", routed through " + gc.lastAppliedOp() + (failure == null ? "" : ", " + failure.getMessage())
                        + "): the catalog's counts are ahead of the workers'; check again once GC resumed", started);
            }
            // under the monitor no delta is made: the outbox only drains now
            if (!drained(w.workerId(), Duration.ofSeconds(5))) {
                return notChecked(w, deltasPending(w), started);
            }
            try {
                return compare(w, remote, now, job, started);
            } catch (WorkerLost e) {
                return notChecked(w, e.getMessage(), started);
            }
        }
    }

    private WorkerResult compare(WorkerRecord w, Remote remote, long now, JobContext job, long started) {
        GmaLayout layout = new GmaLayout(w.range());
        CatalogCounts counts = new CatalogCounts(catalog, layout, line -> { });
        Tally t = new Tally(remote, now, job);
        long passPbns = (long) passChunks * GmaFormat.PBNS_PER_CHUNK;
        long limit = layout.base() + 1;
        for (long lo = layout.base(); lo < limit; lo += passPbns) {
            CatalogCounts.Pass p = new CatalogCounts.Pass(lo, (int) passPbns);
            limit = Math.max(limit, counts.scan(p));
            long end = Math.min(Math.min(lo + passPbns, limit), w.range().limit());
            t.spanStart = Math.max(lo, w.range().first());
            for (int s = 0; s < p.flags.length && p.lo + s < end; s++) {
                if ((p.flags[s] & CatalogCounts.REFERENCED) != 0) {
                    t.add(p.lo + s, p.rc[s], p.pins[s], p.et[s]);
                }
            }
            t.flush(end);
        }
        return new WorkerResult(w.workerId(), w.nodeName(), w.range().toString(), State.CHECKED, null, t.blocks, t.compared, t.rcBelow,
                t.rcAbove, t.pinsDiffer, t.notHeld, t.samples, t.bytes, (System.nanoTime() - started) / 1_000_000);
    }

    /** The spans sent to one worker and the sum of its answers. */
    private static final class Tally {
        private final Remote remote;
        private final long now;
        private final JobContext job;
        private final long[] pbns = new long[CountsCheck.MAX_RECORDS];
        private final int[] rc = new int[CountsCheck.MAX_RECORDS];
        private final int[] pins = new int[CountsCheck.MAX_RECORDS];
        private final long[] et = new long[CountsCheck.MAX_RECORDS];
        private final List<String> samples = new ArrayList<>();
        private int n;
        private long spanStart;
        private long blocks;
        private long compared;
        private long rcBelow;
        private long rcAbove;
        private long pinsDiffer;
        private long notHeld;
        private long bytes;

        Tally(Remote remote, long now, JobContext job) {
            this.remote = remote;
            this.now = now;
            this.job = job;
        }

        void add(long pbn, int c, int p, long e) {
            if (n == CountsCheck.MAX_RECORDS || pbn - spanStart >= CountsCheck.MAX_SPAN) {
                flush(pbn);
            }
            pbns[n] = pbn;
            rc[n] = c;
            pins[n] = p;
            et[n] = e;
            n++;
            blocks++;
        }

        /** Sends the span [spanStart, limit) with the records gathered (also an empty one: the worker's slots there are compared). */
        void flush(long limit) {
            while (spanStart < limit) {
                long end = Math.min(limit, spanStart + CountsCheck.MAX_SPAN);
                int k = 0;
                while (k < n && pbns[k] < end) {
                    k++;
                }
                send(spanStart, end, k);
                System.arraycopy(pbns, k, pbns, 0, n - k);
                System.arraycopy(rc, k, rc, 0, n - k);
                System.arraycopy(pins, k, pins, 0, n - k);
                System.arraycopy(et, k, et, 0, n - k);
                n -= k;
                spanStart = end;
            }
        }

        private void send(long first, long limit, int k) {
            CountsChecked a;
            try {
                a = remote.check(first, limit, now, java.util.Arrays.copyOf(pbns, k), java.util.Arrays.copyOf(rc, k),
                        java.util.Arrays.copyOf(pins, k), java.util.Arrays.copyOf(et, k)).get(10, TimeUnit.MINUTES);
            } catch (ExecutionException e) {
                throw new WorkerLost("lost during the check: " + e.getCause().getMessage());
            } catch (TimeoutException e) {
                throw new WorkerLost("no answer to a span within 10 minutes; nothing was changed");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WorkerLost("the check was interrupted");
            }
            if (a.status() != CountsChecked.COMPARED) {
                throw new WorkerLost("the worker refused: " + a.message());
            }
            long frame = 36L + 24L * k;
            bytes += frame;
            job.advance(0, frame);
            compared += a.compared();
            rcBelow += a.rcBelow();
            rcAbove += a.rcAbove();
            pinsDiffer += a.pinsDiffer();
            notHeld += a.notHeld();
            for (int i = 0; i < a.samplePbns().length && samples.size() < CountsChecked.MAX_SAMPLES; i++) {
                samples.add("PBN " + a.samplePbns()[i] + ": " + switch (a.sampleKinds()[i]) {
                    case CountsChecked.KIND_RC_BELOW -> "RC below the catalog's (risk of loss)";
                    case CountsChecked.KIND_RC_ABOVE -> "RC above the catalog's (leak)";
                    case CountsChecked.KIND_PINS -> "pins differ";
                    default -> "needed but not held (data loss)";
                });
            }
        }
    }

    /** The worker could not finish the check: reported for it, the check goes on with the next. */
    private static final class WorkerLost extends RuntimeException {
        WorkerLost(String message) {
            super(message);
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

    private static WorkerResult notChecked(WorkerRecord w, String why, long started) {
        return new WorkerResult(w.workerId(), w.nodeName(), w.range().toString(), State.NOT_CHECKED, why, 0, 0, 0, 0, 0, 0, List.of(), 0,
                (System.nanoTime() - started) / 1_000_000);
    }
}
