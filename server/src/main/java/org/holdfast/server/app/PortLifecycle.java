package org.holdfast.server.app;

import org.springframework.context.SmartLifecycle;

/**
 * Opens a network endpoint once the context is up and closes it first on shutdown, before any
 * store bean is destroyed (see {@link CoreConfiguration}): the agent port (not on a worker), a
 * master's cluster port, a worker's connection to its master.
 */
class PortLifecycle implements SmartLifecycle {
    private final Runnable start;
    private final AutoCloseable stop;
    private volatile boolean running;

    PortLifecycle(Runnable start, AutoCloseable stop) {
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
            throw new IllegalStateException("cannot close " + stop + ": " + e.getMessage(), e);
        }
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Late start, early stop: after the web server's phase. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 2048;
    }
}
