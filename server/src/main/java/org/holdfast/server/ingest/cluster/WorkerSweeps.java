package org.holdfast.server.ingest.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcSweepFailed;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.server.gc.RangeOwnerSweeps;

/**
 * The master's round of worker sweeps (distributed GC, thesis 7.2.4), for its GC cycle to call after
 * its own sweep: every worker of the membership whose GC delta outbox is drained is asked to sweep
 * its range (all at once: each sweeps its own disks), and the answers are collected within a bounded
 * wait. A worker that still owes deltas is skipped: its GMA would not yet hold every reference the
 * master's catalog has (a commit's RC+1 still in the outbox), and its protection by the grace period
 * is not meant to outlast a long outage. A connected worker's outbox is given up to the drain wait
 * to drain first (the cycle's own deletions were just routed), all workers' at once. A lost, busy,
 * refusing or silent worker is reported, never fatal: the round goes on and the next cycle asks again.
 *
 * <p>A worker is also skipped ({@link State#HELD}) while a backup in progress protected blocks on it
 * over a link that has ended since ({@link SessionHolds}): the worker ended that session with the
 * link, so its blocks are held there by their expiry alone (protection time + grace), which a backup
 * longer than the grace outlives; swept then, a block the backup is about to commit is freed.
 *
 * <p>Why each worker's checks run in this order (link, then holds, then outbox, then the ask):
 * <ul>
 *   <li>The link first: a link is registered only after the one it supersedes was marked lost (the
 *       guard's before the sweep's), so a hold check after taking the new link sees the old link
 *       ended. Checked the other way round, a flap between the two would send the sweep over the new
 *       link with the hold unseen.</li>
 *   <li>A flap after the checks: the sweep goes over the link taken, the old one. Closed, the ask is
 *       lost (reported {@link State#LOST}); if it reached the worker before the worker closed that
 *       link, the sessions of the link were still open there, or the worker's sweep refuses to free
 *       anything: it checks its link is still up after computing its horizon
 *       ({@link WorkerRangeSweep}), so a horizon it uses was computed while those sessions capped it.</li>
 *   <li>The outbox after the holds: a committed session's hold lifts only once its counts were
 *       delivered (routed to the outbox, then acknowledged; {@link RangeReferenceGuard}'s
 *       {@code CountsDelivered}), not at its release: while GC bookkeeping is paused a commit's
 *       RC+1 is in no outbox. So a hold seen lifted means the worker counts the commit, or the
 *       outbox read that follows sees it pending ({@link State#DELTAS_PENDING}).</li>
 * </ul>
 */
public final class WorkerSweeps implements RangeOwnerSweeps {
    private static final System.Logger LOG = System.getLogger(WorkerSweeps.class.getName());
    /** The longest pause between two reads of the outboxes while they drain (the first is 20 ms, doubling). */
    static final long MAX_DRAIN_POLL_MILLIS = 500;

    /** The GC deltas the master has not yet had acknowledged by a worker (its GC delta outbox). */
    @FunctionalInterface
    public interface DeltaOutbox {
        /** Deltas for worker {@code workerId} not yet acknowledged; 0 when drained. */
        long pending(long workerId);
    }

    /** The backups in progress that hold a worker's sweep back ({@link RangeReferenceGuard#heldByEndedLinks}). */
    @FunctionalInterface
    public interface SessionHolds {
        /** None: a master whose guard protects nothing on the workers (tests of the round alone). */
        SessionHolds NONE = range -> 0;

        /** Open sessions that protected blocks of {@code range} over a link that has ended since; 0 when none. */
        int heldByEndedLinks(PbnRange range);
    }

    /** Why a worker's GC counts cannot be trusted to sweep (a catalog restore's fence, {@code gc.WorkerCountsFences}). */
    @FunctionalInterface
    public interface CountsFence {
        /** No fences: a master never restored (tests of the round alone). */
        CountsFence NONE = id -> null;

        /** Why worker {@code workerId} must not sweep, or null if it may. */
        String refusal(long workerId);
    }

    /** What became of one worker's sweep. */
    public enum State { SWEPT, DELTAS_PENDING, HELD, LOST, BUSY, REFUSED, FAILED, NO_ANSWER }

    /** One worker's outcome: its figures if {@link State#SWEPT} (else null), and why in words otherwise. */
    public record Outcome(long workerId, State state, GcSwept report, String detail) {
    }

    private final RangeSweepLinks links;
    private final Supplier<? extends Collection<Long>> workers;
    private final DeltaOutbox outbox;
    private final SessionHolds holds;
    private final CountsFence fence;
    private final Duration wait;
    private final Duration drainWait;

    /**
     * Sweeps through {@code links} the workers {@code workers} lists (the membership's worker ids, lost
     * ones included, so they are reported), skipping those {@code outbox} owes deltas, and waits at most
     * {@code wait} for all answers together; no session holds (tests of the round alone).
     */
    public WorkerSweeps(RangeSweepLinks links, Supplier<? extends Collection<Long>> workers, DeltaOutbox outbox, Duration wait) {
        this(links, workers, outbox, SessionHolds.NONE, wait, Duration.ZERO);
    }

    /**
     * As above, also skipping the workers {@code holds} holds, and first waiting up to
     * {@code drainWait} for the connected workers' outboxes to drain (the GC cycle's own deletions are
     * routed just before it asks).
     */
    public WorkerSweeps(RangeSweepLinks links, Supplier<? extends Collection<Long>> workers, DeltaOutbox outbox, SessionHolds holds,
                        Duration wait, Duration drainWait) {
        this(links, workers, outbox, holds, CountsFence.NONE, wait, drainWait);
    }

    /** As above, also never asking a worker {@code fence} refuses (its counts predate a catalog restore): {@link State#REFUSED}. */
    public WorkerSweeps(RangeSweepLinks links, Supplier<? extends Collection<Long>> workers, DeltaOutbox outbox, SessionHolds holds,
                        CountsFence fence, Duration wait, Duration drainWait) {
        this.fence = fence;
        this.links = links;
        this.workers = workers;
        this.outbox = outbox;
        this.holds = holds;
        this.wait = wait;
        this.drainWait = drainWait;
    }

    /** The GC cycle's round: a real sweep of every eligible worker, one line per worker for the job log. */
    @Override
    public List<String> sweep(long now) {
        return sweep(now, false).stream().map(WorkerSweeps::line).toList();
    }

    /** The job log's line for one worker's outcome. */
    static String line(Outcome o) {
        return "worker sweep of worker " + o.workerId() + ": " + o.state() + ", " + o.detail();
    }

    /** Asks every eligible worker to sweep as of {@code now} (epoch ms; each trusts its own clock first), counting only if {@code dryRun}. */
    public List<Outcome> sweep(long now, boolean dryRun) {
        List<Long> ids = new ArrayList<>(workers.get());
        int n = ids.size();
        Outcome[] outcomes = new Outcome[n]; // a skipped worker's, once known
        long[] pending = new long[n];
        for (int i = 0; i < n; i++) {
            String fenced = refusal(ids.get(i)); // first: whatever else holds, these counts must not free anything
            if (fenced != null) {
                outcomes[i] = new Outcome(ids.get(i), State.REFUSED, null, fenced);
                continue;
            }
            pending[i] = readOutbox(ids.get(i), outcomes, i);
        }
        awaitDrained(ids, pending, outcomes); // the cycle's own deletions were just routed: give them time to arrive
        List<CompletableFuture<GcSwept>> asked = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long id = ids.get(i);
            RemoteRangeSweep link = outcomes[i] == null ? links.up(id) : null; // before the holds: see the class comment
            // again once the link is known: a registration during the round may have fenced its counts (RegistrationCountsFence
            // writes the fence before the new link goes up), and this may be that link
            String fenced = link == null ? null : refusal(id);
            if (fenced != null) {
                outcomes[i] = new Outcome(id, State.REFUSED, null, fenced);
                link = null;
            }
            int held = link == null ? 0 : holds.heldByEndedLinks(link.range());
            if (outcomes[i] == null && link != null && held == 0) {
                pending[i] = readOutbox(id, outcomes, i); // after the holds: see the class comment
            }
            if (outcomes[i] == null && pending[i] != 0) {
                outcomes[i] = new Outcome(id, State.DELTAS_PENDING, null, pending[i] + " GC deltas are not yet acknowledged by it; not"
                        + " swept (its GC metadata may lack references the catalog has): it is swept once they are");
            } else if (outcomes[i] == null && link == null) {
                outcomes[i] = new Outcome(id, State.LOST, null, "not connected; not swept (its blocks stay until it is back)");
            } else if (outcomes[i] == null && held > 0) {
                outcomes[i] = new Outcome(id, State.HELD, null, held + " backups in progress protected blocks on it over an earlier"
                        + " connection, which ended their protection there; not swept until they end (commit or fail)");
            }
            asked.add(outcomes[i] == null ? link.sweep(now, dryRun) : null);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        for (int i = 0; i < n; i++) {
            if (asked.get(i) != null) {
                outcomes[i] = await(ids.get(i), asked.get(i), deadline);
            }
            log(outcomes[i]);
        }
        return List.of(outcomes);
    }

    /** Why worker {@code id}'s counts must not sweep, or null; a fence that cannot be read refuses. */
    private String refusal(long id) {
        try {
            return fence.refusal(id);
        } catch (RuntimeException e) {
            return "its counts fence could not be read (" + e.getMessage() + "); not swept";
        }
    }

    /** Worker {@code ids[i]}'s pending deltas; a read that fails records its skip in {@code outcomes[i]} and returns -1. */
    private long readOutbox(long id, Outcome[] outcomes, int i) {
        try {
            return outbox.pending(id);
        } catch (RuntimeException e) {
            // this worker is not swept, and the round (and the cycle's compaction) goes on
            outcomes[i] = new Outcome(id, State.DELTAS_PENDING, null, "its GC delta outbox cannot be read (" + e.getMessage() + "); not"
                    + " swept");
            return -1;
        }
    }

    /**
     * Reads again the outboxes of the connected workers that owe deltas until each is drained or
     * {@code drainWait} passed, for all of them together (one wait in all, not one per worker),
     * pausing 20 ms first and twice as long each time after, up to {@link #MAX_DRAIN_POLL_MILLIS}.
     */
    private void awaitDrained(List<Long> ids, long[] pending, Outcome[] outcomes) {
        long deadline = System.nanoTime() + drainWait.toNanos();
        long pause = 20;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            boolean waiting = false;
            for (int i = 0; i < ids.size(); i++) {
                waiting |= outcomes[i] == null && pending[i] > 0 && links.up(ids.get(i)) != null;
            }
            if (!waiting || left <= 0) {
                return;
            }
            try {
                Thread.sleep(Math.min(pause, left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            pause = Math.min(pause * 2, MAX_DRAIN_POLL_MILLIS);
            for (int i = 0; i < ids.size(); i++) {
                if (outcomes[i] == null && pending[i] > 0 && links.up(ids.get(i)) != null) {
                    pending[i] = readOutbox(ids.get(i), outcomes, i);
                }
            }
        }
    }

    private Outcome await(long id, CompletableFuture<GcSwept> f, long deadline) {
        try {
            GcSwept s = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            // the kept counts tell an operator a sweep that frees nothing because of the grace from a fault
            return new Outcome(id, State.SWEPT, s, (s.dryRun() ? s.reclaimable() + " blocks reclaimable" : s.blocksFreed()
                    + " blocks freed") + " as of " + java.time.Instant.ofEpochMilli(s.horizon()) + "; kept " + s.keptUnexpired()
                    + " unreferenced whose expiry (grace or retention) lies ahead, " + s.keptReferenced() + " referenced, "
                    + s.keptPinned() + " pinned (" + s.chunksVisited() + " GMA chunks read, " + s.chunksSkipped()
                    + " skipped, " + s.millis() + " ms)");
        } catch (TimeoutException e) {
            // the sweep goes on on the worker; its answer still completes the call, which nobody waits for
            return new Outcome(id, State.NO_ANSWER, null, "no answer within " + wait.toMillis() + " ms; its sweep may still run (the"
                    + " worker logs its result): the next cycle asks again, answered busy while it runs");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RangeWorkerLostException) {
                return new Outcome(id, State.LOST, null, c.getMessage());
            }
            if (c instanceof RangeSweepRefusedException r) {
                State s = r.reason() == GcSweepFailed.BUSY ? State.BUSY : r.reason() == GcSweepFailed.REFUSED ? State.REFUSED : State.FAILED;
                return new Outcome(id, s, null, r.getMessage());
            }
            return new Outcome(id, State.FAILED, null, String.valueOf(c));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome(id, State.NO_ANSWER, null, "the wait for its answer was interrupted");
        }
    }

    private static void log(Outcome o) {
        LOG.log(o.state() == State.SWEPT ? System.Logger.Level.INFO : System.Logger.Level.WARNING, line(o));
    }
}
