package org.holdfast.client.upload;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * The bounded memory that holds payloads of runs the server has not answered yet: a fixed set of
 * reused slabs. The scanner fills one slab at a time with the payloads of consecutive runs and
 * blocks when no slab is free, which is the backpressure from a slow server or network.
 *
 * <p>A slab is reference counted: one reference for the scanner while it fills it, one for each
 * run with payloads in it. A run drops its reference once its NEED is answered and the BLOCKS
 * carrying its payloads have been written to the socket; the slab is free again when the last
 * reference goes. Sharing slabs between runs matters when changes are scattered: a run of one
 * block then costs one block of the window, not a whole slab.
 */
final class PayloadWindow {
    /** One slab of payload memory. */
    static final class Slab {
        final byte[] data;
        final AtomicInteger refs = new AtomicInteger();
        int used; // written by the scanner thread only

        Slab(int bytes) {
            data = new byte[bytes];
        }
    }

    private final ArrayBlockingQueue<Slab> free;
    private final int slabs;
    private final int slabBytes;
    private volatile int created; // written by the scanner thread only

    PayloadWindow(long windowBytes, int blockSize) {
        this.slabBytes = Math.max(blockSize, 4 << 20) / blockSize * blockSize;
        this.slabs = (int) Math.max(2, windowBytes / slabBytes);
        this.free = new ArrayBlockingQueue<>(slabs);
    }

    /**
     * Waits for a free slab, returned empty and holding one reference (the caller's); gives up when
     * the session failed. Slabs are made on first need: an incremental with few changes touches one
     * or two instead of zeroing the whole window at start-up (tens of milliseconds per run).
     * Called by the scanner thread only.
     */
    Slab acquire(SessionFailure failure) {
        try {
            while (true) {
                failure.check();
                Slab s = free.poll();
                if (s == null && created < slabs) {
                    created++;
                    s = new Slab(slabBytes);
                }
                if (s == null) {
                    s = free.poll(100, TimeUnit.MILLISECONDS);
                }
                if (s != null) {
                    s.used = 0;
                    s.refs.set(1);
                    return s;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentException(ExitCode.INTERNAL, "interrupted", null, e);
        }
    }

    /** Adds a reference for a run that keeps payloads in {@code slab}. */
    void retain(Slab slab) {
        slab.refs.incrementAndGet();
    }

    /** Drops one reference; the last one frees the slab. Null is ignored. */
    void release(Slab slab) {
        if (slab != null && slab.refs.decrementAndGet() == 0) {
            free.add(slab);
        }
    }

    /** True when every slab made so far is free. */
    boolean allReturned() {
        return free.size() == created;
    }

    /** The window's size: all its slabs. */
    long bytes() {
        return (long) slabs * slabBytes;
    }

    /** Slabs made so far (at most the window's share). */
    int slabsCreated() {
        return created;
    }
}
