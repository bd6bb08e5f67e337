package org.holdfast.server.ingest;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs tasks one at a time, in submission order, on a shared executor: a connection's own ordered
 * lane on the session pool without a thread of its own.
 */
public final class SerialExecutor implements Executor {
    private final Executor pool;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private boolean running;
    /** When the lane last ran out of tasks (System.nanoTime). */
    private long idleSince = System.nanoTime();

    public SerialExecutor(Executor pool) {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (tasks) {
            tasks.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        try {
            pool.execute(this::drain);
        } catch (RejectedExecutionException e) {
            // the pool is shutting down: run here, so that no task (and no buffer it must release) is lost
            drain();
        }
    }

    /**
     * Whether a task runs or waits, or the last one ended less than {@code nanos} ago: the connection's
     * server side was working on something the agent sent within that time. The recent past counts
     * because a task's reply is written after the task ends: an idle check that runs between the two
     * must not take a long commit for an idle agent.
     */
    public boolean busyWithin(long nanos) {
        synchronized (tasks) {
            return running || System.nanoTime() - idleSince < nanos;
        }
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (tasks) {
                next = tasks.poll();
                if (next == null) {
                    running = false;
                    idleSince = System.nanoTime();
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException e) {
                // tasks handle their own failures; one escaping must not stall the lane
                Thread t = Thread.currentThread();
                t.getUncaughtExceptionHandler().uncaughtException(t, e);
            }
        }
    }
}
