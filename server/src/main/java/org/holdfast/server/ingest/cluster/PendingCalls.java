package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolException;

/**
 * The calls in flight from the master on one worker link, for one kind of call (dedup, range data):
 * each request carries a fresh id and its future completes with the answer that carries the same id,
 * so several calls can be in flight. Once the link is lost (it closed, or a call was not answered
 * within the timeout) every pending and later call fails with the caller's lost error.
 */
final class PendingCalls {
    private final Channel channel;
    private final Duration timeout;
    private final Function<String, RuntimeException> lostError;
    private final AtomicLong nextId = new AtomicLong();
    private final ConcurrentHashMap<Long, CompletableFuture<Message>> pending = new ConcurrentHashMap<>();
    private volatile String lost;

    /** Calls on {@code channel}; {@code lostError} makes the error of a call through a lost link from why it was lost. */
    PendingCalls(Channel channel, Duration timeout, Function<String, RuntimeException> lostError) {
        this.channel = channel;
        this.timeout = timeout;
        this.lostError = lostError;
    }

    /** A fresh request id. */
    long nextId() {
        return nextId.incrementAndGet();
    }

    /** False once the link ended or a call timed out. */
    boolean isUp() {
        return lost == null && channel.isActive();
    }

    /** Sends {@code request} (carrying {@code id}); the future completes with the worker's answer. */
    CompletableFuture<Message> call(long id, Message request) {
        CompletableFuture<Message> f = new CompletableFuture<>();
        String why = lost;
        if (why != null) {
            f.completeExceptionally(lostError.apply(why));
            return f;
        }
        pending.put(id, f);
        why = lost; // lost() may have failed every pending call between the check above and the put
        if (why != null) {
            fail(id, lostError.apply(why));
            return f;
        }
        channel.writeAndFlush(request).addListener(w -> {
            if (!w.isSuccess()) {
                fail(id, lostError.apply("cannot send to it (" + w.cause() + ")"));
            }
        });
        f.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).whenComplete((m, e) -> {
            pending.remove(id);
            if (e instanceof TimeoutException) {
                lost("no answer within " + timeout.toMillis() + " ms");
            }
        });
        return f;
    }

    /** What failed call {@code c} says: its message, or for one that timed out (a TimeoutException carries none) that it did. */
    static String reason(Throwable c) {
        if (c instanceof TimeoutException) {
            return "a worker sent no answer within holdfast.cluster.lost-after (busy, or the link is gone)";
        }
        return c.getMessage() != null ? c.getMessage() : c.toString();
    }

    /** The link ended or went silent: every pending and later call fails with {@code why}. */
    void lost(String why) {
        if (lost == null) {
            lost = why;
        }
        for (Long id : pending.keySet()) {
            fail(id, lostError.apply(why));
        }
    }

    /** The pending call answer {@code m} completes; an answer to an id not pending is a protocol error (the link closes). */
    CompletableFuture<Message> take(long id, Message m) {
        CompletableFuture<Message> p = pending.remove(id);
        if (p == null) {
            throw new ProtocolException(ErrorCode.BAD_STATE, m.type() + " answers request " + Long.toUnsignedString(id)
                    + ", which is not pending on this link");
        }
        return p;
    }

    /** Requests in flight. */
    int size() {
        return pending.size();
    }

    private void fail(long id, RuntimeException e) {
        CompletableFuture<Message> f = pending.remove(id);
        if (f != null) {
            f.completeExceptionally(e);
        }
    }
}
