package org.holdfast.client.restore;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.holdfast.common.protocol.RestoreData;

/**
 * Spreads the decoding, verification and writing of RESTORE_DATA frames over worker threads, so
 * decompression and SHA-256 use every core while the receiving thread keeps reading the socket.
 *
 * <p>{@link #submit} cuts a frame into pieces of at most {@code pieceBlocks} blocks (each worker
 * owns one output buffer of that size) and queues them; each piece holds its own reference to the
 * frame. Workers write their pieces at their positions in any order: the target is complete when
 * every piece is done, which {@link #finish} waits for. The queue is bounded, so a slow disk or
 * slow workers block {@code submit}, the receiver stops taking frames, and TCP backpressure slows
 * the server: memory stays bounded by the queue, the connection's inbox and one buffer per worker.
 *
 * <p>The first failure of any worker (a {@link BlockMismatchException}, a write error) stops the
 * pipeline: later and queued pieces are dropped, and {@code submit}/{@code finish} throw it.
 */
final class RestorePipeline implements AutoCloseable {
    private static final Piece STOP = new Piece(null, 0, 0);

    private final BlockingQueue<Piece> queue;
    private final Thread[] workers;
    private final BlockVerifier[] verifiers;
    private final int pieceBlocks;
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    private final AtomicLong zeroBlocks = new AtomicLong();
    private final AtomicLong pending = new AtomicLong();
    private final Object doneLock = new Object();
    private boolean stopped;

    private record Piece(RestoreData frame, int from, int to) {
    }

    RestorePipeline(RestoreWriter writer, int blockSize, int threads, int pieceBlocks) {
        if (threads < 1 || pieceBlocks < 1) {
            throw new IllegalArgumentException("threads " + threads + ", piece " + pieceBlocks);
        }
        this.pieceBlocks = pieceBlocks;
        this.queue = new ArrayBlockingQueue<>(2 * threads + 2);
        this.workers = new Thread[threads];
        this.verifiers = new BlockVerifier[threads];
        for (int t = 0; t < threads; t++) {
            verifiers[t] = new BlockVerifier(writer, blockSize, pieceBlocks);
            BlockVerifier v = verifiers[t];
            workers[t] = new Thread(() -> work(v), "holdfast-restore-" + t);
            workers[t].setDaemon(true);
        }
        for (Thread w : workers) {
            w.start();
        }
    }

    /** Worker threads for this machine: one per core (the receiver and the kernel's writes need little). */
    static int defaultThreads() {
        return Math.max(1, Math.min(8, Runtime.getRuntime().availableProcessors()));
    }

    /** Queues every block of {@code frame}; takes over the caller's reference (released even on failure). */
    void submit(RestoreData frame) {
        try {
            for (int from = 0; from < frame.count(); from += pieceBlocks) {
                throwIfFailed();
                Piece p = new Piece(frame.retain(), from, Math.min(frame.count(), from + pieceBlocks));
                pending.incrementAndGet();
                if (!offer(p)) {
                    pending.decrementAndGet();
                    frame.release();
                    throwIfFailed();
                }
            }
        } finally {
            frame.release();
        }
    }

    private boolean offer(Piece p) {
        try {
            while (!queue.offer(p, 100, TimeUnit.MILLISECONDS)) {
                if (failure.get() != null) {
                    return false;
                }
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(new IllegalStateException("interrupted while queueing restore work", e));
            return false;
        }
    }

    /** Waits until every submitted piece is written; throws the first failure. Returns the zero blocks seen. */
    long finish() {
        synchronized (doneLock) {
            while (pending.get() > 0 && failure.get() == null) {
                try {
                    doneLock.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    fail(new IllegalStateException("interrupted while waiting for restore workers", e));
                }
            }
        }
        throwIfFailed();
        return zeroBlocks.get();
    }

    private void throwIfFailed() {
        RuntimeException f = failure.get();
        if (f != null) {
            throw f;
        }
    }

    private void fail(RuntimeException e) {
        failure.compareAndSet(null, e);
        synchronized (doneLock) {
            doneLock.notifyAll();
        }
    }

    private void work(BlockVerifier v) {
        while (true) {
            Piece p;
            try {
                p = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (p == STOP) {
                return;
            }
            try {
                if (failure.get() == null) {
                    zeroBlocks.addAndGet(v.verifyAndWrite(p.frame, p.from, p.to));
                }
            } catch (RuntimeException e) {
                fail(e);
            } catch (Error e) {
                fail(new IllegalStateException("restore worker failed: " + e, e));
            } finally {
                p.frame.release();
                if (pending.decrementAndGet() == 0) {
                    synchronized (doneLock) {
                        doneLock.notifyAll();
                    }
                }
            }
        }
    }

    /** Stops the workers, releases queued frames and the workers' zstd contexts. Idempotent. */
    @Override
    public void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        failure.compareAndSet(null, new IllegalStateException("restore pipeline closed"));
        for (Piece p; (p = queue.poll()) != null; ) {
            if (p != STOP) {
                p.frame.release();
                pending.decrementAndGet();
            }
        }
        // A stop mark per worker rather than an interrupt: an interrupt during a FileChannel write closes the channel.
        for (Thread w : workers) {
            if (!queue.offer(STOP)) {
                w.interrupt();
            }
        }
        for (Thread w : workers) {
            try {
                w.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (BlockVerifier v : verifiers) {
            v.close();
        }
    }
}
