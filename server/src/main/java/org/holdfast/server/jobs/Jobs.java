package org.holdfast.server.jobs;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The job runner and registry: takes submitted jobs, runs them, and answers what each is doing or
 * did. Jobs run in lanes: each lane is one thread that runs its jobs one at a time in the order
 * they came, so jobs that must not overlap (every GC job: cycle, compaction, fsck, reclaim-now) share
 * a lane and queue, while other lanes run beside them.
 *
 * <p>History: every change of state (queued, running, ended) is saved to the {@link JobHistory},
 * and the newest {@link #HISTORY} jobs are kept in memory for listing; at construction they are
 * loaded from it, so ids keep growing across restarts. Progress while running is not saved (it
 * changes per item); a job that was running when the server died is repaired by the store.
 *
 * <p>Cancellation: a queued job ends at once and never runs; a running one is asked to stop and
 * ends at its next {@link JobContext#checkpoint()}, where stopping loses nothing.
 */
public final class Jobs implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Jobs.class.getName());
    /** Log lines kept per job (the newest). */
    public static final int LOG_LINES = 200;
    /** Ended jobs kept (the newest), here and in the store. */
    public static final int HISTORY = 500;
    /** Largest page {@link #list} answers. */
    public static final int MAX_LIMIT = 500;

    /**
     * Filters and page of a listing; nulls match everything. {@code before}: only jobs with a smaller
     * id (the cursor: the last id of the previous page).
     */
    public record Query(String kind, JobState state, Long before, int limit) {
        public Query {
            if (limit < 1 || limit > MAX_LIMIT) {
                throw new IllegalArgumentException("limit must be 1.." + MAX_LIMIT + ", got " + limit);
            }
        }

        boolean matches(Job j) {
            return (kind == null || kind.equals(j.kind())) && (state == null || state == j.state())
                    && (before == null || j.id() < before);
        }
    }

    /** A page of jobs, newest first; {@code nextCursor} null when there is nothing older. */
    public record Page(List<Job> jobs, Long nextCursor) {
    }

    private final JobHistory history;
    private final Clock clock;
    private final AtomicLong nextId;
    private final Map<String, ExecutorService> lanes = new HashMap<>(); // guarded by itself
    private final ConcurrentSkipListMap<Long, RunningJob> active = new ConcurrentSkipListMap<>();
    private final ConcurrentSkipListMap<Long, Job> ended = new ConcurrentSkipListMap<>();
    private final List<Consumer<Job>> endListeners = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    /** A runner over {@code history} (its newest jobs are loaded; ids continue after them). */
    public Jobs(JobHistory history, Clock clock) {
        this.history = Objects.requireNonNull(history);
        this.clock = Objects.requireNonNull(clock);
        long max = 0;
        for (Job j : history.newest(HISTORY)) {
            ended.put(j.id(), j);
            max = Math.max(max, j.id());
        }
        this.nextId = new AtomicLong(max + 1);
    }

    /**
     * Queues {@code work} as a job of {@code kind} in {@code lane} (one job at a time per lane);
     * answers the queued job. Refused once the runner is closing.
     */
    public Job submit(String kind, String lane, String submittedBy, JobWork work) {
        Objects.requireNonNull(kind);
        Objects.requireNonNull(lane);
        Objects.requireNonNull(work);
        RunningJob j = new RunningJob(nextId.getAndIncrement(), kind, lane, submittedBy == null ? "" : submittedBy, work,
                clock, LOG_LINES);
        ExecutorService executor;
        synchronized (lanes) {
            if (closed) {
                throw new JobsClosedException();
            }
            executor = lanes.computeIfAbsent(lane, l -> Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "job-" + l);
                t.setDaemon(true);
                return t;
            }));
            active.put(j.id, j);
            Job queued = j.snapshot();
            save(queued);
            executor.execute(() -> execute(j));
            return queued;
        }
    }

    private void execute(RunningJob j) {
        if (!j.start()) {
            return; // cancelled while queued: already retired
        }
        save(j.snapshot());
        try {
            Map<String, Object> result = JobResults.of(j.work.run(j));
            j.end(JobState.SUCCEEDED, result, null);
        } catch (JobCancelledException e) {
            j.log("cancelled at a safe point");
            String why = j.cancelReason();
            j.end(JobState.CANCELLED, null, (why == null ? "" : why + "; ") + e.getMessage());
        } catch (Throwable e) {
            String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            LOG.log(System.Logger.Level.WARNING, "job " + j.id + " (" + j.kind + ") failed: " + message, e);
            j.log("failed: " + message);
            j.end(JobState.FAILED, null, message);
            if (e instanceof Error err && !(e instanceof AssertionError)) {
                retire(j);
                throw err;
            }
        }
        retire(j);
    }

    /** Moves an ended job from the active set to the history (here and in the store), then tells the listeners. */
    private void retire(RunningJob j) {
        Job done = j.snapshot();
        ended.put(done.id(), done);
        active.remove(j.id);
        save(done);
        while (ended.size() > HISTORY) {
            ended.pollFirstEntry();
        }
        for (Consumer<Job> l : endListeners) {
            try {
                l.accept(done);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "a listener of job " + done.id() + " failed: " + e.getMessage(), e);
            }
        }
    }

    /** Calls {@code listener} on the job's lane thread once each job has ended (keep it short). */
    public void onEnded(Consumer<Job> listener) {
        endListeners.add(Objects.requireNonNull(listener));
    }

    private void save(Job job) {
        try {
            history.save(job);
        } catch (RuntimeException e) {
            // the job itself is not harmed; only its record across a restart is
            LOG.log(System.Logger.Level.WARNING, "job " + job.id() + " could not be saved to the history: " + e.getMessage());
        }
    }

    /** The job as of now. */
    public Job get(long id) {
        RunningJob r = active.get(id);
        if (r != null) {
            return r.snapshot();
        }
        Job j = ended.get(id);
        if (j == null) {
            r = active.get(id); // it may have ended between the two reads
            if (r != null) {
                return r.snapshot();
            }
            throw new UnknownJobException(Long.toString(id));
        }
        return j;
    }

    /** Jobs newest first, filtered and paged. */
    public Page list(Query q) {
        // by id, newest first; a job that ends while this runs may be seen in both maps: keep one
        java.util.NavigableMap<Long, Job> all = new java.util.TreeMap<>(Comparator.reverseOrder());
        for (RunningJob r : active.values()) {
            all.put(r.id, r.snapshot());
        }
        for (Job j : ended.values()) {
            all.putIfAbsent(j.id(), j);
        }
        List<Job> page = new ArrayList<>();
        Long next = null;
        for (Job j : all.values()) {
            if (!q.matches(j)) {
                continue;
            }
            if (page.size() == q.limit()) {
                next = page.get(page.size() - 1).id();
                break;
            }
            page.add(j);
        }
        return new Page(page, next);
    }

    /**
     * Asks a job to stop: a queued job is dropped (cancelled at once), a running one stops at its
     * next checkpoint. Answers the job as of now. Throws {@link UnknownJobException} or
     * {@link JobFinishedException}.
     */
    public Job cancel(long id, String by) {
        RunningJob r = active.get(id);
        if (r == null) {
            throw new JobFinishedException(get(id)); // unknown ids throw from get
        }
        String why = "cancelled by " + (by == null || by.isEmpty() ? "an operator" : by);
        if (r.cancel(why)) {
            retire(r);
        }
        return r.snapshot();
    }

    /** Waits up to {@code timeout} for the job to end; answers it as of then (ended or not). */
    public Job await(long id, Duration timeout) throws InterruptedException {
        RunningJob r = active.get(id);
        if (r != null) {
            r.await(Math.max(0, timeout.toMillis()));
            // the latch opens just before retire: wait for the move so callers see the stored job
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (active.containsKey(id) && r.state().finished() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
        }
        return get(id);
    }

    /**
     * Stops the runner: no new jobs; queued jobs are cancelled, running ones asked to stop at their
     * next checkpoint and waited for up to {@code timeout}. Call before what the jobs use closes.
     */
    public void close(Duration timeout) {
        List<ExecutorService> executors;
        synchronized (lanes) {
            if (closed) {
                return;
            }
            closed = true;
            executors = new ArrayList<>(lanes.values());
        }
        for (RunningJob r : active.values()) {
            try {
                if (r.cancel("the server stopped")) {
                    retire(r);
                }
            } catch (JobFinishedException e) {
                // ended meanwhile
            }
        }
        for (ExecutorService e : executors) {
            e.shutdown();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        for (ExecutorService e : executors) {
            try {
                if (!e.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    LOG.log(System.Logger.Level.WARNING, "a job did not reach a safe point within " + timeout
                            + "; it is recorded as interrupted at the next start");
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void close() {
        close(Duration.ofMinutes(1));
    }
}
