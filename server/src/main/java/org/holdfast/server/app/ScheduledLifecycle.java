package org.holdfast.server.app;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.springframework.context.SmartLifecycle;

/**
 * Work the server runs on a schedule of its own ({@code GcSchedule}, {@code StatsRefresh}): one
 * daemon thread from start to stop; stop lets it take no more tasks and waits up to a minute for
 * the one running, with the ingest and before any store bean is destroyed.
 */
abstract class ScheduledLifecycle implements SmartLifecycle {
    private final String threadName;
    private ScheduledExecutorService executor;
    private boolean running;

    /** {@code threadName} names the schedule's thread. */
    ScheduledLifecycle(String threadName) {
        this.threadName = threadName;
    }

    /**
     * Schedules the work on a {@link #newScheduler()} and returns it, or returns null if there is
     * nothing to run. Called once per start, under this object's lock.
     */
    abstract ScheduledExecutorService schedule();

    /** Called by {@link #stop} once the schedule takes no more tasks, before waiting for the one running. */
    void stopping() {
    }

    /** A scheduler running on one daemon thread named for this schedule. */
    final ScheduledThreadPoolExecutor newScheduler() {
        return new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** The running schedule, or null while stopped (or if {@link #schedule} had nothing to run). */
    final synchronized ScheduledExecutorService executor() {
        return executor;
    }

    @Override
    public final synchronized void start() {
        running = true;
        executor = schedule();
    }

    @Override
    public final synchronized void stop() {
        running = false;
        if (executor != null) {
            executor.shutdown();
            stopping();
            try {
                executor.awaitTermination(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            executor = null;
        }
    }

    @Override
    public final synchronized boolean isRunning() {
        return running;
    }

    /** Stops with the ingest (and the other schedules), before any store bean is destroyed. */
    @Override
    public final int getPhase() {
        return Integer.MAX_VALUE - 4096;
    }
}
