package org.holdfast.server.store;

import java.util.concurrent.TimeUnit;

/**
 * Where the build of a {@link RangeCopy} stands, for the reads that wait on it: a generation that
 * moves at each indexed log, at the end (built or failed) and at close, so a read that found nothing
 * waits for the next change instead of polling; and the INFO lines on the build's progress (logs and
 * bytes indexed, rate, time left by logs), at most one per {@link #LOG_EVERY_NANOS}.
 */
final class RangeCopyProgress {
    private static final System.Logger LOG = System.getLogger(RangeCopy.class.getName());
    /** Least time between two progress lines (the first and last log are always logged). */
    static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final long worker;
    private long generation;
    private boolean opened;
    private boolean finished;
    private RuntimeException failure;
    private long lastLine = Long.MIN_VALUE;
    // the last indexed log's figures, for figures()
    private int logsDone;
    private int logsTotal;
    private long bytesDone;
    private long buildNanos;

    RangeCopyProgress(long worker) {
        this.worker = worker;
    }

    synchronized long generation() {
        return generation;
    }

    /** Whether every log is indexed and the damaged blocks are settled (false while building, or if it failed). */
    synchronized boolean built() {
        return finished && failure == null;
    }

    /** What the build failed with, or null. */
    synchronized RuntimeException failure() {
        return failure;
    }

    /** The store is made: reads may start. */
    synchronized void opened() {
        opened = true;
        moved();
    }

    /** Log {@code done} of {@code total} is indexed ({@code bytes} downloaded since the start, {@code nanos} ago): its blocks read. */
    void indexed(int done, int total, long bytes, long nanos) {
        synchronized (this) {
            logsDone = done;
            logsTotal = total;
            bytesDone = bytes;
            buildNanos = nanos;
            moved();
        }
        long now = System.nanoTime();
        if (done == 1 || done == total || now - lastLine >= LOG_EVERY_NANOS) {
            lastLine = now;
            double seconds = Math.max(nanos / 1e9, 1e-3);
            LOG.log(System.Logger.Level.INFO, "copying worker {0}''s range from the bucket: {1}/{2} logs, {3} MiB in {4} s ({5} MiB/s),"
                            + " about {6} s left; its blocks read as their logs are indexed", Long.toString(worker), done, total,
                    String.format("%.1f", bytes / 1048576.0), String.format("%.1f", seconds),
                    String.format("%.1f", bytes / 1048576.0 / seconds), Math.round(seconds / done * (total - done)));
        }
    }

    /** The build is to index {@code total} logs (before the first is indexed). */
    synchronized void planned(int total) {
        logsTotal = total;
    }

    /** How far the build is: logs and bytes done, and the time left by logs (-1 before the first log is indexed). */
    synchronized RangeCopy.Progress figures() {
        long left = logsDone == 0 ? -1 : Math.round(buildNanos / 1e9 / logsDone * (logsTotal - logsDone));
        return new RangeCopy.Progress(worker, logsDone, logsTotal, bytesDone, left);
    }

    /** The build ended: {@code failed} null if every log is indexed and the damage settled. */
    synchronized void finished(RuntimeException failed) {
        finished = true;
        failure = failed;
        moved();
    }

    /** Wakes every waiting read (the copy is closing). */
    synchronized void wake() {
        moved();
    }

    /** Waits until the store is made; throws what the build failed with before that. */
    synchronized void awaitOpened() {
        while (!opened && !finished) {
            waitHere();
        }
        if (!opened) {
            throw failure != null ? failure : new IllegalStateException("the copy's build ended before its store was made");
        }
    }

    /** Waits until the generation moves past {@code seen}. */
    synchronized void awaitChange(long seen) {
        while (generation == seen) {
            waitHere();
        }
    }

    private void moved() {
        generation++;
        notifyAll();
    }

    private void waitHere() {
        try {
            wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BlocksUnavailableException("interrupted while waiting for the bucket copy of worker " + worker + "'s range", e);
        }
    }
}
