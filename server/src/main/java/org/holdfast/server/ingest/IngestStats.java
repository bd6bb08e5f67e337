package org.holdfast.server.ingest;

import java.util.concurrent.atomic.AtomicLong;

/** Counters of the ingest server, for metrics. */
public final class IngestStats {
    final AtomicLong connections = new AtomicLong();
    final AtomicLong sessions = new AtomicLong();
    final AtomicLong commits = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong unprovenMatches = new AtomicLong();
    final AtomicLong limited = new AtomicLong();

    /** Connections and requests refused for a bad token or missing rights. */
    public long refused() {
        return refused.get();
    }

    /** Engine matches asked for as payload because the agent did not prove it holds the block. */
    public long unprovenMatches() {
        return unprovenMatches.get();
    }

    public long connections() {
        return connections.get();
    }

    public long sessions() {
        return sessions.get();
    }

    public long commits() {
        return commits.get();
    }

    public long errors() {
        return errors.get();
    }

    /** Connections closed by a resource limit: over the connection maximum, too much before HELLO, too slow. */
    public long limited() {
        return limited.get();
    }
}
