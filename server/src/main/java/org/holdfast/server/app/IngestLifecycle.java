package org.holdfast.server.app;

import org.holdfast.server.ingest.IngestServer;
import org.springframework.context.SmartLifecycle;

/**
 * Binds the agent port once the context is up and closes it first on shutdown (before any store
 * bean is destroyed; see {@link CoreConfiguration}). On a worker ({@code listen} false) it never binds.
 */
public class IngestLifecycle implements SmartLifecycle {
    private final IngestServer server;
    private final boolean listen;
    private volatile boolean running;

    public IngestLifecycle(IngestServer server, boolean listen) {
        this.server = server;
        this.listen = listen;
    }

    @Override
    public void start() {
        if (listen) {
            server.start();
        }
        running = true;
    }

    @Override
    public void stop() {
        server.close();
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
