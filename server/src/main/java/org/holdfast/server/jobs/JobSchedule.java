package org.holdfast.server.jobs;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Submits a job of one kind every interval, the first one interval after the start, and skips a turn
 * while one of that kind is still queued or running (one at a time is enough; the next turn tries
 * again). Owns its timer thread; {@link #close()} stops it.
 */
public final class JobSchedule implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(JobSchedule.class.getName());

    private final ScheduledExecutorService timer;

    private JobSchedule(String kind, Duration every, Jobs jobs, Runnable submit) {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "holdfast-" + kind + "-schedule");
            t.setDaemon(true);
            return t;
        });
        long ms = every.toMillis();
        timer.scheduleAtFixedRate(() -> {
            try {
                boolean busy = jobs.list(new Jobs.Query(kind, JobState.RUNNING, null, 1)).jobs().size()
                        + jobs.list(new Jobs.Query(kind, JobState.QUEUED, null, 1)).jobs().size() > 0;
                if (!busy) {
                    submit.run();
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "scheduled " + kind + " could not start: " + e.getMessage());
            }
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Starts calling {@code submit} (which submits a job of {@code kind}) every {@code every}. */
    public static JobSchedule start(String kind, Duration every, Jobs jobs, Runnable submit) {
        return new JobSchedule(kind, every, jobs, submit);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
