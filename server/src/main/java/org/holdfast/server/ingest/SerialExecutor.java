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

    /** Whether a task runs or waits: the connection's server side is working on something the agent sent. */
    public boolean busy() {
        synchronized (tasks) {
            return running;
        }
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (tasks) {
                next = tasks.poll();
                if (next == null) {
                    running = false;
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
