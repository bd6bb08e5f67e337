package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.util.ArrayDeque;
import java.util.concurrent.Semaphore;

/**
 * Restore read-ahead on backend s3: a restore knows the PBNs it will read; this fetches the ranges
 * they lie in on the cache's read-ahead threads before the reader gets there, so a cold cache costs
 * the reader waits on GETs already in flight rather than one GET after another.
 *
 * <p>The planner ({@link #plan}, one thread per restore) locates each PBN, skips logs that are on
 * local disk and ranges cached or in flight, and coalesces consecutive ranges of one log into one
 * GET of at most {@link LogCache#MAX_GET_BYTES} (fewer when that would starve the threads). Depth:
 * each range claimed takes a permit, returned once the reader passes the LBN that first needed it
 * ({@link #reached}), so at most {@code readAheadBytes} are fetched ahead of the reader's current
 * batch (whose ranges are fetched in parallel without counting); the planner blocks beyond that,
 * after submitting what it has claimed (a reader may be waiting for it). A failed GET fails
 * the readers waiting for its ranges (a missing object as corrupt data naming its key); the
 * planner itself never waits for a GET.
 */
public final class ReadAhead implements AutoCloseable {
    /** PBNs located per index pass. */
    private static final int LOCATE_BATCH = 1024;

    private final DataStore store;
    private final LogCache cache;
    private final int rangeBytes;
    private final int maxRun;
    private final Semaphore depth;
    // per claimed range outside the current batch, the first LBN that needs it (one permit each), in plan order; guarded by itself
    private final ArrayDeque<Long> outstanding = new ArrayDeque<>();
    private final BlockBatch located = new BlockBatch(LOCATE_BATCH, 0, 1);
    private final boolean[] noSkip = new boolean[LOCATE_BATCH];
    private volatile long reached;
    private volatile boolean closed;
    // planner thread only: the run of claimed ranges not yet submitted, and the last range looked at
    private int runLog = -1;
    private int runFirst;
    private int runCount;
    private int seenLog = -1;
    private long seenRange = -1;
    private boolean seenLocal;

    ReadAhead(DataStore store, LogCache cache) {
        this.store = store;
        this.cache = cache;
        LogCache.Settings s = cache.settings();
        this.rangeBytes = s.rangeBytes();
        int ranges = s.readAheadRanges();
        this.depth = new Semaphore(ranges);
        long perThread = (long) ranges * rangeBytes / s.readAheadThreads();
        this.maxRun = (int) Math.max(1, Math.min(LogCache.MAX_GET_BYTES, perThread) / rangeBytes);
    }

    /**
     * Plans the fetches for {@code pbns[0..n)}, which the reader will need at {@code lbns[0..n)} (in
     * increasing order). Blocks while the depth is used up.
     */
    public void plan(long[] pbns, long[] lbns, int n) throws InterruptedException {
        int from = 0;
        while (from < n && !closed) {
            int m = Math.min(LOCATE_BATCH, n - from);
            int missing = store.locations().getAll(pbns, from, m, noSkip, located);
            int ok = missing < 0 ? m : missing; // a PBN without a location: the reader reports it
            for (int i = 0; i < ok && !closed; i++) {
                planRecord(lbns[from + i], located.logId[i], located.offset[i], located.location[i]);
            }
            from += missing < 0 ? m : missing + 1;
        }
        submit();
    }

    private void planRecord(long lbn, int logId, long offset, int location) throws InterruptedException {
        // the reader is at it already: its ranges are fetched in parallel all the same, outside the depth
        boolean current = lbn < reached;
        if (logId != seenLog) {
            seenLog = logId;
            seenRange = -1;
            seenLocal = store.isLocal(logId);
        }
        if (seenLocal) {
            return;
        }
        long end = offset + RECORD_HEADER_BYTES + FrameFormat.recordStored(location);
        for (long r = offset / rangeBytes; r <= (end - 1) / rangeBytes; r++) {
            if (r == seenRange) {
                continue; // the previous record's range (members of one frame, neighbours)
            }
            seenRange = r;
            if (!current && !depth.tryAcquire()) {
                submit(); // before blocking: the reader may be waiting for a claimed range
                depth.acquire();
            }
            if (closed || !cache.claim(logId, (int) r)) {
                if (!current) {
                    depth.release();
                }
                continue;
            }
            if (!current) {
                synchronized (outstanding) {
                    outstanding.add(lbn);
                }
            }
            if (runLog == logId && r == runFirst + runCount && runCount < maxRun) {
                runCount++;
            } else {
                submit();
                runLog = logId;
                runFirst = (int) r;
                runCount = 1;
            }
        }
    }

    private void submit() {
        if (runCount > 0) {
            cache.fetchAhead(runLog, runFirst, runCount);
            runCount = 0;
        }
    }

    /**
     * The reader has read, or is reading now, everything before {@code lbn}: the ranges planned for
     * those LBNs no longer count against the depth, and the planner skips what it has not planned there.
     */
    public synchronized void reached(long lbn) {
        if (lbn <= reached) {
            return;
        }
        reached = lbn;
        int free = 0;
        synchronized (outstanding) {
            while (!outstanding.isEmpty() && outstanding.peekFirst() < lbn) {
                outstanding.pollFirst();
                free++;
            }
        }
        if (free > 0) {
            depth.release(free);
        }
    }

    /** Stops planning (a planner blocked on the depth returns); GETs already submitted finish into the cache. */
    @Override
    public void close() {
        closed = true;
        depth.release(1 << 20);
    }
}
