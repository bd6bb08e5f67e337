package org.holdfast.client.daemon;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Sends finished runs to the server on a thread of its own, so a slow or unreachable server never
 * delays a backup or the daemon's stop. A run the server did not take waits, oldest first, and goes
 * before the next one (so a run that failed because the server was down shows up once it is back);
 * at most {@link #MAX_PENDING} wait, the oldest are dropped beyond that (the run log keeps them all).
 */
final class RunReports implements AutoCloseable {
    /** Runs kept waiting for the server. */
    static final int MAX_PENDING = 100;

    private final AgentConfig config;
    private final RunReporter reporter;
    private final DaemonLog log;
    private final Deque<RunRecord> pending = new ArrayDeque<>();
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "holdfast-run-reports");
        t.setDaemon(true);
        return t;
    });

    RunReports(AgentConfig config, RunReporter reporter, DaemonLog log) {
        this.config = config;
        this.reporter = reporter;
        this.log = log;
    }

    /** Queues {@code run} and tries to send everything waiting. Any thread; returns at once. */
    void submit(RunRecord run) {
        synchronized (pending) {
            pending.addLast(run);
            while (pending.size() > MAX_PENDING) {
                RunRecord dropped = pending.removeFirst();
                log.info("volume " + dropped.volume() + ": run from " + dropped.start() + " dropped from the reports waiting for the server");
            }
        }
        try {
            thread.execute(this::drain);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // stopping: the run log has it
        }
    }

    /** Runs waiting for the server. */
    int pending() {
        synchronized (pending) {
            return pending.size();
        }
    }

    private void drain() {
        while (true) {
            RunRecord next;
            synchronized (pending) {
                next = pending.peekFirst();
            }
            if (next == null) {
                return;
            }
            String error;
            try {
                error = reporter.report(config, next);
            } catch (RuntimeException e) {
                error = "internal error: " + e;
            }
            if (error != null) {
                log.info("volume " + next.volume() + ": could not report the run from " + next.start() + " to the server ("
                        + error + "); " + pending() + " run(s) wait for the next report");
                return;
            }
            synchronized (pending) {
                pending.remove(next);
            }
        }
    }

    /** Stops sending; a report under way gets a moment to finish. */
    @Override
    public void close() {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(2, TimeUnit.SECONDS)) {
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
