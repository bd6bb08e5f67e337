package org.holdfast.server.jobs;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One submitted job while the runner holds it: its progress counters and log, which the job's
 * thread writes through {@link JobContext} and any thread reads through {@link #snapshot()}.
 *
 * <p>Threads: counters are atomics and totals volatiles, so {@link #advance} is one or two atomic
 * adds and allocates nothing (jobs call it per item); the log is guarded by its own monitor; state
 * changes are guarded by this object's monitor, so cancel and start cannot cross.
 */
final class RunningJob implements JobContext {
    /** Longest kept log line, in characters (a stack trace is not a log line). */
    static final int MAX_LINE = 1000;

    final long id;
    final String kind;
    final String lane;
    final String submittedBy;
    final JobWork work;
    private final Clock clock;
    private final int logLines;
    private final long submittedAt;
    private final AtomicLong itemsDone = new AtomicLong();
    private final AtomicLong bytesDone = new AtomicLong();
    private volatile long itemsTotal = -1;
    private volatile long bytesTotal = -1;
    private volatile boolean cancel;
    private volatile String cancelReason;
    private final ArrayDeque<String> log = new ArrayDeque<>();
    private final CountDownLatch ended = new CountDownLatch(1);
    // guarded by this
    private JobState state = JobState.QUEUED;
    private long startedAt = -1;
    private long endedAt = -1;
    private Map<String, Object> result;
    private String error;

    RunningJob(long id, String kind, String lane, String submittedBy, JobWork work, Clock clock, int logLines) {
        this.id = id;
        this.kind = kind;
        this.lane = lane;
        this.submittedBy = submittedBy;
        this.work = work;
        this.clock = clock;
        this.logLines = logLines;
        this.submittedAt = clock.millis();
    }

    // ------------------------------------------------------------------ JobContext

    @Override
    public void total(long items, long bytes) {
        itemsTotal = items < 0 ? -1 : items;
        bytesTotal = bytes < 0 ? -1 : bytes;
    }

    @Override
    public void advance(long items, long bytes) {
        if (items != 0) {
            itemsDone.addAndGet(items);
        }
        if (bytes != 0) {
            bytesDone.addAndGet(bytes);
        }
    }

    @Override
    public void log(String line) {
        String l = line == null ? "" : line.length() > MAX_LINE ? line.substring(0, MAX_LINE) + "..." : line;
        String stamped = Instant.ofEpochMilli(clock.millis()) + " " + l;
        synchronized (log) {
            if (log.size() == logLines) {
                log.removeFirst();
            }
            log.addLast(stamped);
        }
    }

    @Override
    public boolean cancelRequested() {
        return cancel;
    }

    // ------------------------------------------------------------------ life, driven by Jobs

    /** Queued to running; false if the job was cancelled while it waited (then it must not run). */
    synchronized boolean start() {
        if (state != JobState.QUEUED) {
            return false;
        }
        state = JobState.RUNNING;
        startedAt = clock.millis();
        return true;
    }

    /** Ends the job; a no-op if it has ended already. */
    synchronized void end(JobState end, Map<String, Object> result, String error) {
        if (state.finished()) {
            return;
        }
        this.state = end;
        this.result = result;
        this.error = error;
        this.endedAt = clock.millis();
        ended.countDown();
    }

    /**
     * Asks the job to stop: a queued one ends at once (true: the caller retires it), a running one
     * at its next checkpoint (false). Throws if it has ended.
     */
    synchronized boolean cancel(String why) {
        if (state.finished()) {
            throw new JobFinishedException(snapshot());
        }
        cancelReason = why;
        if (state == JobState.QUEUED) {
            log(why + " before it started");
            cancel = true;
            end(JobState.CANCELLED, null, why);
            return true;
        }
        log(why + "; stopping at the next safe point"); // before the flag: the job's own last line comes after it
        cancel = true;
        return false;
    }

    /** Who asked the job to stop, or null. */
    String cancelReason() {
        return cancelReason;
    }

    synchronized JobState state() {
        return state;
    }

    boolean await(long millis) throws InterruptedException {
        return ended.await(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** The job as of now. */
    Job snapshot() {
        JobState s;
        long start;
        long end;
        Map<String, Object> r;
        String e;
        synchronized (this) {
            s = state;
            start = startedAt;
            end = endedAt;
            r = result;
            e = error;
        }
        ArrayList<String> lines;
        synchronized (log) {
            lines = new ArrayList<>(log);
        }
        long now = clock.millis();
        return new Job(id, kind, s, submittedBy, Instant.ofEpochMilli(submittedAt), start < 0 ? null : Instant.ofEpochMilli(start),
                end < 0 ? null : Instant.ofEpochMilli(end), progress(s, start, end < 0 ? now : end), cancel, r, e, lines);
    }

    private Job.Progress progress(JobState s, long start, long until) {
        long items = itemsDone.get();
        long bytes = bytesDone.get();
        long it = itemsTotal;
        long bt = bytesTotal;
        if (start < 0) {
            return new Job.Progress(items, it, bytes, bt, 0, 0, null);
        }
        double seconds = Math.max(1, until - start) / 1000.0;
        double itemRate = items / seconds;
        double byteRate = bytes / seconds;
        Long eta = null;
        if (s == JobState.RUNNING) {
            // bytes say more about time than items when both are known (items differ in size)
            if (bt > 0 && bytes > 0) {
                eta = Math.round(Math.max(0, bt - bytes) / byteRate);
            } else if (it > 0 && items > 0) {
                eta = Math.round(Math.max(0, it - items) / itemRate);
            }
        }
        return new Job.Progress(items, it, bytes, bt, round(itemRate), round(byteRate), eta);
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
