package org.holdfast.client.upload;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * The bounded memory that holds payloads of runs the server has not answered yet: a fixed set of
 * reused slabs. The scanner takes a slab per run and blocks when none is free, which is the
 * backpressure from a slow server or network; a slab comes back once its run's NEED is answered
 * and the BLOCKS carrying its payloads have been written to the socket.
 */
final class PayloadWindow {
    private final ArrayBlockingQueue<byte[]> free;
    private final int slabs;
    private final int slabBytes;

    PayloadWindow(long windowBytes, int blockSize) {
        this.slabBytes = Math.max(blockSize, 4 << 20) / blockSize * blockSize;
        this.slabs = (int) Math.max(2, windowBytes / slabBytes);
        this.free = new ArrayBlockingQueue<>(slabs);
        for (int i = 0; i < slabs; i++) {
            free.add(new byte[slabBytes]);
        }
    }

    int slabBytes() {
        return slabBytes;
    }

    /** Waits for a free slab; gives up when the session failed. */
    byte[] acquire(SessionFailure failure) {
        try {
            while (true) {
                failure.check();
                byte[] s = free.poll(100, TimeUnit.MILLISECONDS);
                if (s != null) {
                    return s;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentException(ExitCode.INTERNAL, "interrupted", null, e);
        }
    }

    void release(byte[] slab) {
        if (slab != null) {
            free.add(slab);
        }
    }

    /** True when every slab is back. */
    boolean allReturned() {
        return free.size() == slabs;
    }
}
