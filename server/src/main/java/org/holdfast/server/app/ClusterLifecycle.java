package org.holdfast.server.app;

import org.springframework.context.SmartLifecycle;

/**
 * Starts the cluster link (a master's cluster port or a worker's connection to its master) once the
 * context is up, and closes it first on shutdown, in the agent port's phase ({@link IngestLifecycle}).
 */
class ClusterLifecycle implements SmartLifecycle {
    private final Runnable start;
    private final AutoCloseable stop;
    private volatile boolean running;

    ClusterLifecycle(Runnable start, AutoCloseable stop) {
        this.start = start;
        this.stop = stop;
    }

    @Override
    public void start() {
        start.run();
        running = true;
    }

    @Override
    public void stop() {
        try {
            stop.close();
        } catch (Exception e) {
            throw new IllegalStateException("cannot close the cluster link: " + e.getMessage(), e);
        }
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 2048;
    }
}
