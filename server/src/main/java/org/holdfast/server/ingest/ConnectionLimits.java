package org.holdfast.server.ingest;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts open agent connections, in total and per source address, and refuses one over either
 * maximum. Thread-safe: connections are admitted on the accept thread and released on their own
 * event loops.
 */
final class ConnectionLimits {
    private final int maxTotal;
    private final int maxPerSource;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> perSource = new ConcurrentHashMap<>();

    ConnectionLimits(int maxTotal, int maxPerSource) {
        this.maxTotal = maxTotal;
        this.maxPerSource = maxPerSource;
    }

    /**
     * Counts a new connection from {@code source}, or returns why it is refused (nothing counted).
     * Every admitted connection must be {@link #release}d once.
     */
    String admit(InetAddress source) {
        if (total.incrementAndGet() > maxTotal) {
            total.decrementAndGet();
            return "the server has its maximum of " + maxTotal + " agent connections open; try again later"
                    + " (an operator can raise holdfast.ingest.max-connections)";
        }
        AtomicInteger n = perSource.compute(source, (k, v) -> {
            AtomicInteger c = v == null ? new AtomicInteger() : v;
            c.incrementAndGet();
            return c;
        });
        if (n.get() > maxPerSource) {
            release(source);
            return "address " + source.getHostAddress() + " has its maximum of " + maxPerSource
                    + " agent connections open; close some or try again later (an operator can raise"
                    + " holdfast.ingest.max-connections-per-source)";
        }
        return null;
    }

    /** Uncounts an admitted connection. */
    void release(InetAddress source) {
        perSource.computeIfPresent(source, (k, v) -> v.decrementAndGet() <= 0 ? null : v);
        total.decrementAndGet();
    }

    /** Connections open now. */
    int open() {
        return total.get();
    }
}
