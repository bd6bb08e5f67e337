package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.holdfast.common.protocol.DataReadAnswer;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.Message;

/**
 * One service's thread on the worker link, bounded (backpressure): requests queue here in arrival
 * order, and while more than {@link #MAX_QUEUED_REQUESTS} or {@link #MAX_QUEUED_BYTES} of them wait,
 * the link stops reading ({@link LinkBackpressure}) until they drain below half. Before serving the
 * next request the thread waits while its answers not yet written to the socket pass
 * {@link #MAX_ANSWER_BYTES}: a master that does not read cannot make the worker buffer answers
 * without end. Requests still queued when the link ends are dropped.
 */
final class BoundedLane {
    /**
     * Requests queued at most before the link stops reading: enough to keep the thread busy while
     * the next ones arrive, few enough that a flood of small requests costs little memory.
     */
    static final int MAX_QUEUED_REQUESTS = 64;
    /** Request bytes queued at most before the link stops reading: two full DATA_STOREs (16 MiB frames) keep the thread busy. */
    static final long MAX_QUEUED_BYTES = 32L << 20;
    /** Answer bytes handed to the link but not yet written, at most, before the thread serves the next request: two 16 MiB answers. */
    static final long MAX_ANSWER_BYTES = 32L << 20;
    /** What an answer other than DATA_READ_ANSWER is counted as: small, but never free. */
    private static final long SMALL_ANSWER_BYTES = 64;

    private final ExecutorService lane;
    private final Object lock = new Object();
    private int queuedRequests; // lock
    private long queuedBytes; // lock: requests queued, not yet served
    private long answerBytes; // lock: answers handed to the link, not yet written
    private long peakBytes; // lock
    private volatile boolean holding; // set on the event loop only

    /** A lane on a daemon thread named {@code threadName}. */
    BoundedLane(String threadName) {
        lane = Executors.newSingleThreadExecutor(new DefaultThreadFactory(threadName, true));
    }

    /** Runs {@code task} on the lane, uncounted (opening and closing the service's store); false if the lane is stopping. */
    boolean run(Runnable task) {
        try {
            lane.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /**
     * Queues a request of {@code requestBytes}, served by {@code serve} on the lane and its answer
     * (if not null) written to {@code ctx}, unless the link ended or is lingering after its ERROR by then (the
     * master gave it up). Event loop only.
     */
    void submit(ChannelHandlerContext ctx, long requestBytes, Supplier<Message> serve) {
        Channel ch = ctx.channel();
        boolean full;
        synchronized (lock) {
            queuedRequests++;
            queuedBytes += requestBytes;
            peakBytes = Math.max(peakBytes, queuedBytes + answerBytes);
            full = queuedRequests > MAX_QUEUED_REQUESTS || queuedBytes > MAX_QUEUED_BYTES;
        }
        if (full) {
            holding = true;
            LinkBackpressure.of(ch).hold(this);
        }
        try {
            lane.execute(() -> {
                try {
                    awaitAnswerRoom(ch);
                    if (ch.isActive() && !ErrorLinger.isLingering(ch)) {
                        Message a = serve.get();
                        if (a != null) { // a request without an answer (GC_SESSION_END)
                            answer(ctx, a);
                        }
                    }
                } finally {
                    dequeue(ctx, requestBytes);
                }
            });
        } catch (RejectedExecutionException e) {
            dequeue(ctx, requestBytes);
            ctx.close(); // the worker is stopping
        }
    }

    private void answer(ChannelHandlerContext ctx, Message a) {
        long bytes = a instanceof DataReadAnswer d ? d.data().length + d.count() * 48L : SMALL_ANSWER_BYTES;
        synchronized (lock) {
            answerBytes += bytes;
            peakBytes = Math.max(peakBytes, queuedBytes + answerBytes);
        }
        // completes (or fails, the link closing) once the encoded answer left for the socket
        ctx.writeAndFlush(a).addListener(done -> {
            synchronized (lock) {
                answerBytes -= bytes;
                lock.notifyAll();
            }
        });
    }

    /** Waits while this lane's unwritten answers are at the bound and the link is up. */
    private void awaitAnswerRoom(Channel ch) {
        synchronized (lock) {
            while (answerBytes >= MAX_ANSWER_BYTES && ch.isActive()) {
                try {
                    lock.wait(100); // a closing link fails its writes, which notifies; the timeout re-checks isActive anyway
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void dequeue(ChannelHandlerContext ctx, long requestBytes) {
        boolean drained;
        synchronized (lock) {
            queuedRequests--;
            queuedBytes -= requestBytes;
            drained = queuedRequests <= MAX_QUEUED_REQUESTS / 2 && queuedBytes <= MAX_QUEUED_BYTES / 2;
        }
        if (drained && holding) {
            try {
                ctx.executor().execute(() -> {
                    synchronized (lock) {
                        // re-checked on the event loop, where holds are taken: a request read since may have filled it again
                        if (!holding || queuedRequests > MAX_QUEUED_REQUESTS / 2 || queuedBytes > MAX_QUEUED_BYTES / 2) {
                            return;
                        }
                    }
                    holding = false;
                    LinkBackpressure.of(ctx.channel()).release(this);
                });
            } catch (RejectedExecutionException e) {
                // the worker is stopping: nothing more to read
            }
        }
    }

    /** Most bytes this lane held at once: queued requests plus answers not yet written (for tests). */
    long peakQueuedBytes() {
        synchronized (lock) {
            return peakBytes;
        }
    }

    /** Stops taking requests; queued ones still run (and are dropped as the link ended). */
    void shutdown() {
        lane.shutdown();
    }
}
