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
import org.holdfast.common.protocol.GcSweepFailed;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.server.gc.RangeOwnerSweeps;

/**
 * The master's round of worker sweeps (distributed GC, thesis 7.2.4), for its GC cycle to call after
 * its own sweep: every worker of the membership whose GC delta outbox is drained is asked to sweep
 * its range (all at once: each sweeps its own disks), and the answers are collected within a bounded
 * wait. A worker that still owes deltas is skipped: its GMA would not yet hold every reference the
 * master's catalog has (a commit's RC+1 still in the outbox), and its protection by the grace period
 * is not meant to outlast a long outage. A lost, busy, refusing or silent worker is reported, never
 * fatal: the round goes on and the next cycle asks again.
 */
public final class WorkerSweeps implements RangeOwnerSweeps {
    private static final System.Logger LOG = System.getLogger(WorkerSweeps.class.getName());

    /** The GC deltas the master has not yet had acknowledged by a worker (its GC delta outbox). */
    @FunctionalInterface
    public interface DeltaOutbox {
        /** Deltas for worker {@code workerId} not yet acknowledged; 0 when drained. */
        long pending(long workerId);
    }

    /** What became of one worker's sweep. */
    public enum State { SWEPT, DELTAS_PENDING, LOST, BUSY, REFUSED, FAILED, NO_ANSWER }

    /** One worker's outcome: its figures if {@link State#SWEPT} (else null), and why in words otherwise. */
    public record Outcome(long workerId, State state, GcSwept report, String detail) {
    }

    private final RangeSweepLinks links;
    private final Supplier<? extends Collection<Long>> workers;
    private final DeltaOutbox outbox;
    private final Duration wait;
    private final Duration drainWait;

    /**
     * Sweeps through {@code links} the workers {@code workers} lists (the membership's worker ids, lost
     * ones included, so they are reported), skipping those {@code outbox} owes deltas, and waits at most
     * {@code wait} for all answers together.
     */
    public WorkerSweeps(RangeSweepLinks links, Supplier<? extends Collection<Long>> workers, DeltaOutbox outbox, Duration wait) {
        this(links, workers, outbox, wait, Duration.ZERO);
    }

    /**
     * As above, first waiting up to {@code drainWait} for a connected worker's outbox to drain (the
     * GC cycle's own deletions are routed just before it asks).
     */
    public WorkerSweeps(RangeSweepLinks links, Supplier<? extends Collection<Long>> workers, DeltaOutbox outbox, Duration wait,
                        Duration drainWait) {
        this.links = links;
        this.workers = workers;
        this.outbox = outbox;
        this.wait = wait;
        this.drainWait = drainWait;
    }

    /** The GC cycle's round: a real sweep of every eligible worker, one line per worker for the job log. */
    @Override
    public List<String> sweep(long now) {
        return sweep(now, false).stream().map(o -> "worker sweep of worker " + o.workerId() + ": " + o.state() + ", " + o.detail())
                .toList();
    }

    /** Asks every eligible worker to sweep as of {@code now} (epoch ms; each trusts its own clock first), counting only if {@code dryRun}. */
    public List<Outcome> sweep(long now, boolean dryRun) {
        List<Long> ids = new ArrayList<>(workers.get());
        List<Outcome> outcomes = new ArrayList<>(ids.size());
        List<CompletableFuture<GcSwept>> asked = new ArrayList<>(ids.size());
        for (long id : ids) {
            Outcome skip = null;
            long pending;
            try {
                pending = outbox.pending(id);
            } catch (RuntimeException e) {
                pending = -1;
                skip = new Outcome(id, State.DELTAS_PENDING, null, "its GC delta outbox cannot be read (" + e.getMessage() + "); not"
                        + " swept");
            }
            RemoteRangeSweep link = links.up(id);
            if (skip == null && pending > 0 && link != null) {
                pending = awaitDrained(id, pending); // the cycle's own deletions were just routed: give them time to arrive
            }
            if (skip == null && pending != 0) {
                skip = new Outcome(id, State.DELTAS_PENDING, null, pending + " GC deltas are not yet acknowledged by it; not swept"
                        + " (its GC metadata may lack references the catalog has): it is swept once they are");
            } else if (skip == null && link == null) {
                skip = new Outcome(id, State.LOST, null, "not connected; not swept (its blocks stay until it is back)");
            }
            outcomes.add(skip);
            asked.add(skip == null ? link.sweep(now, dryRun) : null);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        for (int i = 0; i < ids.size(); i++) {
            if (asked.get(i) != null) {
                outcomes.set(i, await(ids.get(i), asked.get(i), deadline));
            }
            log(outcomes.get(i));
        }
        return outcomes;
    }

    /** Polls worker {@code id}'s outbox until it is drained or {@code drainWait} passed; returns what is still pending. */
    private long awaitDrained(long id, long pending) {
        long deadline = System.nanoTime() + drainWait.toNanos();
        try {
            while (pending > 0 && System.nanoTime() < deadline && links.up(id) != null) {
                Thread.sleep(20);
                pending = outbox.pending(id);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // as the first read's failure: this worker is not swept, and the round (and the cycle's compaction) goes on
            LOG.log(System.Logger.Level.WARNING, "the GC delta outbox of worker " + id + " cannot be read (" + e.getMessage()
                    + "); it is not swept this cycle");
        }
        return pending;
    }

    private Outcome await(long id, CompletableFuture<GcSwept> f, long deadline) {
        try {
            GcSwept s = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return new Outcome(id, State.SWEPT, s, (s.dryRun() ? s.reclaimable() + " blocks reclaimable" : s.blocksFreed()
                    + " blocks freed") + " as of " + java.time.Instant.ofEpochMilli(s.horizon()) + " (" + s.chunksVisited() + " GMA chunks read, " + s.chunksSkipped()
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
        LOG.log(o.state() == State.SWEPT ? System.Logger.Level.INFO : System.Logger.Level.WARNING, "worker sweep of worker "
                + o.workerId() + ": " + o.state() + ", " + o.detail());
    }
}
