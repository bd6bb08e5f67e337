package org.holdfast.server.ingest.cluster;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.gc.sweep.SweepReport;
import org.holdfast.gc.sweep.Sweeper;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.store.CompactionThreshold;
import org.holdfast.server.store.Compactor;
import org.holdfast.server.store.DataStore;

/**
 * A worker's sweep of its PBN range (distributed GC, thesis 7.2.4), one per worker process, kept
 * across its links: a gc-engine {@link Sweeper} over the range's GC metadata ({@link WorkerGcMetadata}:
 * the pipeline and its grace guard) that frees blocks of the range store ({@link WorkerRangeData})
 * through a {@link RangeBlockReclaimer} (the worker's dedup engine forgets them first), then a
 * compaction of the range's sealed data logs, as the standalone cycle runs them.
 *
 * <p>The worker trusts its own clock: a sweep compares expiries against the earlier of the master's
 * time and the worker's, capped by its guard's {@link GraceGuard#sweepHorizon} (a backup in progress
 * holds it back), and by the stores answered over a live link that the master has not protected yet
 * ({@link AnsweredStores#cap}). So a master whose clock runs ahead cannot free a block early; one behind only
 * frees later. A block with RC &gt; 0, or an expiry at or after the horizon, or a pin, is never freed.
 * A sweep asked over a link frees nothing if that link ended before its horizon was computed
 * ({@link #run(PbnRange, long, boolean, BooleanSupplier)}).
 *
 * <p>One sweep at a time: {@link #tryBegin} is the gate, taken on the link's event loop so that a
 * second request is refused at once rather than queued behind an hour-long sweep; {@link #run}
 * releases it. The sweeper (and its skip table, in the GC directory) is kept while the range's
 * pipeline stays the same.
 */
public final class WorkerRangeSweep {
    private static final System.Logger LOG = System.getLogger(WorkerRangeSweep.class.getName());
    /** How far answered-but-unprotected stores may hold the horizon back before a sweep warns, at most (see heldBackTooLong). */
    static final Duration HELD_BACK_WARNING = Duration.ofHours(1);

    /** The node's {@code holdfast.gc.sweep-batch-chunks}, {@code compaction-threshold} (0: off) and {@code compaction-max-bytes}. */
    public record Settings(int batchChunks, double compactionThreshold, long compactionMaxBytes) {
        /** As the standalone GC's defaults: 64 chunks per batch, compaction below a live share of 0.5, at most 64 GB copied. */
        public static final Settings DEFAULTS = new Settings(64, Compactor.DEFAULT_THRESHOLD, 64L << 30);

        public Settings {
            // refused when the worker starts, naming the setting, rather than at the master's first sweep
            if (batchChunks < 1) {
                throw new IllegalArgumentException("holdfast.gc.sweep-batch-chunks must be at least 1, got " + batchChunks);
            }
            CompactionThreshold.check(compactionThreshold,
                    t -> "holdfast.gc.compaction-threshold must be in 0..1 (0 turns compaction off), got " + t);
            if (compactionMaxBytes <= 0) {
                throw new IllegalArgumentException("holdfast.gc.compaction-max-bytes must be positive, got " + compactionMaxBytes);
            }
        }
    }

    /** A sweep that could not start: the range data or GC metadata is not open (nothing freed). */
    static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Refused(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** What a caller can see of the sweeps: one running (since when, blocks freed so far), and the last finished one. */
    public record Progress(boolean running, long startedAt, long freedSoFar, RangeSweepReport last, String lastFailure) {
    }

    private final WorkerRangeData data;
    private final WorkerGcMetadata gc;
    private final DedupWorker dedup;
    private final Settings settings;
    private final StaleMarkOutbox staleMarks;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile boolean stopping;
    private volatile long startedAt;
    private volatile RangeBlockReclaimer reclaimer; // the current sweeper's, for progress
    private volatile long baseline; // its count when the running sweep started
    private volatile RangeSweepReport last;
    private volatile String lastFailure;
    // the run's thread only (one run at a time)
    private Sweeper sweeper;
    private BoscPipeline sweeperPipeline;
    private DataStore sweeperStore;

    /** Sweeps {@code data}'s blocks with {@code gc}'s metadata, telling {@code dedup} (null: no engine) what it frees. */
    public WorkerRangeSweep(WorkerRangeData data, WorkerGcMetadata gc, DedupWorker dedup, Settings settings) {
        this.data = data;
        this.gc = gc;
        this.dedup = dedup;
        this.settings = settings;
        // beside the GC metadata: the freed blocks the master has not yet forwarded to the other engines
        this.staleMarks = new StaleMarkOutbox(gc.dir().resolve("stale-marks"));
    }

    /** The stale marks of the blocks this worker's sweeps freed, until the master forwarded them (cluster version 8). */
    public StaleMarkOutbox staleMarks() {
        return staleMarks;
    }

    /** The batch size and compaction settings this worker sweeps with. */
    public Settings settings() {
        return settings;
    }

    /** Takes the gate; false if a sweep runs (or is about to). The caller that gets true must call {@link #run} or {@link #cancelBegin}. */
    boolean tryBegin() {
        if (stopping || !running.compareAndSet(false, true)) {
            return false;
        }
        startedAt = gc.clock().millis();
        return true;
    }

    /**
     * The worker process is stopping: no sweep starts any more, a running one ends before its next
     * batch is freed; waits up to {@code wait} for it (false if it still runs, in its compaction say).
     * Call before the range data and GC metadata close.
     */
    public boolean stop(java.time.Duration wait) {
        stopping = true;
        long deadline = System.nanoTime() + wait.toNanos();
        while (running.get() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return !running.get();
            }
        }
        return !running.get();
    }

    /** Gives the gate back without sweeping (the request could not be queued). */
    void cancelBegin() {
        running.set(false);
    }

    /** The sweep running and the last one finished. */
    public Progress progress() {
        RangeBlockReclaimer r = reclaimer;
        boolean on = running.get();
        return new Progress(on, on ? startedAt : 0, on && r != null ? Math.max(0, r.reclaimed() - baseline) : 0, last, lastFailure);
    }

    /**
     * Sweeps range {@code range} as of {@code masterNow} (0: the worker's clock alone) and, unless
     * {@code dryRun}, compacts its sealed logs; releases the gate {@link #tryBegin} took.
     *
     * @throws Refused the range data or GC metadata is not open over {@code range} (nothing freed)
     * @throws RuntimeException the sweep failed part way (what it freed is freed and marked FREED)
     */
    RangeSweepReport run(PbnRange range, long masterNow, boolean dryRun) {
        return run(range, masterNow, dryRun, () -> true);
    }

    /**
     * As above, for a sweep asked over a link to the master: refused, nothing freed, if
     * {@code linkUp} is false once the horizon is computed. The worker ends the backups' sessions of a
     * link when it closes (its guard's protection of their blocks), after the channel stops being
     * active; so a link still active after the horizon was computed means its sessions were open
     * then and capped it. Without this check, a sweep asked just before a link flap (queued on the
     * lane, or waiting for the range data) could compute its horizon after those sessions ended,
     * uncapped, and free a block a backup still in progress on the master is about to commit (the
     * master holds such a worker's sweeps only over later links: {@link WorkerSweeps}).
     *
     * @throws Refused the range data or GC metadata is not open over {@code range}, or the link ended (nothing freed)
     */
    RangeSweepReport run(PbnRange range, long masterNow, boolean dryRun, BooleanSupplier linkUp) {
        try {
            RangeSweepReport r = sweep(range, masterNow, dryRun, linkUp);
            last = r;
            lastFailure = null;
            LOG.log(System.Logger.Level.INFO, r.describe());
            return r;
        } catch (RuntimeException e) {
            lastFailure = e.getMessage();
            LOG.log(System.Logger.Level.WARNING, (dryRun ? "dry-run range sweep" : "range sweep") + " of PBNs " + range + " failed: "
                    + e.getMessage() + (e instanceof Refused ? "" : "; what it freed before stays freed, the next sweep goes on"));
            throw e;
        } finally {
            running.set(false);
        }
    }

    private RangeSweepReport sweep(PbnRange range, long masterNow, boolean dryRun, BooleanSupplier linkUp) {
        long start = System.nanoTime();
        DataStore store;
        BoscPipeline pipeline;
        GraceGuard guard;
        try {
            store = data.claim(range);
            pipeline = gc.claim(range);
            guard = gc.guard();
        } catch (RuntimeException e) {
            throw new Refused("the range data in " + data.dir() + " or the GC metadata in " + gc.dir() + " is not open over PBNs " + range
                    + " (" + e.getMessage() + "); nothing was freed: fix that (see the worker's log) and sweep again", e);
        }
        if (guard == null) {
            throw new Refused("the GC metadata in " + gc.dir() + " closed under the sweep; nothing was freed", null);
        }
        if (gc.countsLost()) {
            throw new Refused("the GC metadata in " + gc.dir() + " was created over a range store that already held blocks, so the"
                    + " reference counts from before are lost (" + gc.dir().resolve(WorkerGcMetadata.COUNTS_LOST) + "); no sweep frees"
                    + " anything on this worker until that file is gone: rebuild range-data/gc from the master's catalog (both stopped:"
                    + " gc-rebuild --worker N --out FILE on the master, worker-gc-import --file FILE here; docs/operations.md), or"
                    + " restore it from a copy taken with range-data/data and remove the file", null);
        }
        if (sweeper == null || sweeperPipeline != pipeline || sweeperStore != store) {
            reclaimer = new RangeBlockReclaimer(store, dedup, staleMarks, () -> stopping);
            sweeper = new Sweeper(pipeline, guard, reclaimer, settings.batchChunks());
            sweeperPipeline = pipeline;
            sweeperStore = store;
        }
        baseline = reclaimer.reclaimed();
        if (!dryRun) {
            // every block appended so far durable and indexed (its grace expiry first, StoredBlockExpiry): a block whose
            // answer was lost may never have been synced, and forgetting a location still pending would not stick
            pipeline.awaitDurable();
            store.sync();
        }
        long own = gc.clock().millis();
        long asOf = masterNow > 0 ? Math.min(masterNow, own) : own; // the worker trusts its own clock
        // stores answered but not yet protected first, then the sessions (AnsweredStores.cap says why in this order)
        long capped = gc.answered().cap(asOf);
        warnIfHeldBack(asOf, capped, guard.grace());
        long horizon = guard.sweepHorizon(capped);
        if (!linkUp.getAsBoolean()) { // after the horizon: see run
            throw new Refused((stopping ? "the worker is stopping and " : "") + "the link to the master that asked for this sweep"
                    + " ended before it freed anything, and the backups that protected blocks over it ended with it (their"
                    + " protection may not have held back its horizon); nothing was freed: the master asks again over its next link",
                    null);
        }
        long skippedBefore = sweeper.chunksSkipped();
        SweepReport s = dryRun ? sweeper.dryRun(horizon) : sweeper.sweep(horizon);
        long skipped = sweeper.chunksSkipped() - skippedBefore;
        long bytes = GcSwept.UNKNOWN_BYTES;
        if (!dryRun && settings.compactionThreshold() > 0) {
            try {
                // seals a sparse active log, so its garbage goes too (as the standalone cycle's compaction)
                bytes = Math.max(0, new Compactor(store).run(settings.compactionThreshold(), settings.compactionMaxBytes(), true)
                        .bytesReclaimed());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "compaction of the range data in " + data.dir() + " after the sweep failed: "
                        + e.getMessage() + "; the freed blocks stay freed, their bytes wait for the next sweep's compaction");
            }
        }
        return new RangeSweepReport(range, masterNow, horizon, dryRun, skipped, s, bytes, (System.nanoTime() - start) / 1_000_000,
                gc.clock().millis());
    }

    /**
     * A store stays answered-but-unprotected for a session's next frame or two; one still there past
     * its grace by {@link #heldBackTooLong} was dropped by a session whose protect failed, and holds this
     * range's reclaim back until its link ends: say so, since nothing else shows it.
     */
    private void warnIfHeldBack(long asOf, long capped, Duration grace) {
        if (heldBackTooLong(asOf, capped, grace)) {
            LOG.log(System.Logger.Level.WARNING, gc.answered().pending() + " DATA_STOREs this worker answered over its live link"
                    + " to the master were never protected by the master's backups; the oldest holds this range's sweep "
                    + ((asOf - capped) / 60_000) + " min behind (no block whose expiry falls after that point is freed while the"
                    + " link lives). Restart the worker (or let its link to the master end) to release them: their blocks are then"
                    + " freed after the grace, and every committed block keeps its references");
        }
    }

    /** Whether the answered stores hold the horizon {@code capped} back from {@code asOf} by more than an hour or one grace, whichever is shorter. */
    static boolean heldBackTooLong(long asOf, long capped, Duration grace) {
        return asOf - capped > Math.min(HELD_BACK_WARNING.toMillis(), grace.toMillis());
    }
}
