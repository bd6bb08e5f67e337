package org.holdfast.server.ingest;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server-wide budget of agent-port bytes in flight: frames being received (reserved whole as
 * soon as their header arrives) and frames waiting for or on a session lane, over all connections.
 *
 * <p>A connection that finds no room stops reading (its decoder waits, autoRead off) and is woken
 * when bytes are released, instead of the server allocating more: a flood of connections claiming
 * 16 MiB frames costs at most this much memory, and the kernel's socket buffers push back on the
 * senders. A frame once reserved always has room to finish, so waiting connections cannot
 * deadlock each other. Thread-safe.
 */
final class InflightBudget {
    private final long limit;
    private final AtomicLong used = new AtomicLong();
    private final ConcurrentLinkedQueue<Runnable> waiters = new ConcurrentLinkedQueue<>();

    InflightBudget(long limit) {
        this.limit = limit;
    }

    /**
     * Reserves {@code bytes} if they fit; otherwise registers {@code wakeUp} to run (once) after the
     * next release and returns false.
     */
    boolean tryReserve(long bytes, Runnable wakeUp) {
        if (reserve(bytes)) {
            return true;
        }
        waiters.add(wakeUp);
        // a release between the failed reserve and add would have found no waiter: try once more
        if (reserve(bytes)) {
            waiters.remove(wakeUp);
            return true;
        }
        return false;
    }

    private boolean reserve(long bytes) {
        while (true) {
            long u = used.get();
            if (u + bytes > limit) {
                return false;
            }
            if (used.compareAndSet(u, u + bytes)) {
                return true;
            }
        }
    }

    /** Gives {@code bytes} back and wakes the connections that were waiting for room. */
    void release(long bytes) {
        used.addAndGet(-bytes);
        Runnable w;
        while ((w = waiters.poll()) != null) {
            w.run();
        }
    }

    /** Bytes reserved now. */
    long used() {
        return used.get();
    }

    long limit() {
        return limit;
    }

    /** Connections waiting for room. */
    int waiting() {
        return waiters.size();
    }
}
