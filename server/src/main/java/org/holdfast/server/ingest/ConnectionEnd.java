package org.holdfast.server.ingest;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;

/**
 * How an agent connection ends with an ERROR, at most once: lingering over what the agent still
 * sends when one of its frames was refused, closing as soon as the ERROR is written when a timer
 * refused it, and in no case held open past {@code boundMillis} (the idle timeout) by an agent
 * that reads nothing. Any thread.
 */
final class ConnectionEnd {
    private final AtomicBoolean closing = new AtomicBoolean();
    // set after the ERROR's write (or its linger) was handed to the event loop; closing is set before it
    private volatile boolean errorHandedOver;
    private final long boundMillis;

    ConnectionEnd(long boundMillis) {
        this.boundMillis = boundMillis;
    }

    /** True once an ERROR went out or the connection closed: nothing more of its input is handled. */
    boolean closing() {
        return closing.get();
    }

    /**
     * Closes the connection behind its ERROR: once the ERROR's write was handed to the event loop, a
     * close queued on the event loop runs after that write (its tasks run in order), so the agent gets
     * the reason (or, if the write is stuck behind output the agent does not read, the close drops it).
     * Before that (a thread set {@code closing} and is about to write), nothing: the next call, or
     * {@link #closeAtTheLatest}, closes. Returns whether a close was queued.
     */
    boolean closeBehindError(Channel channel) {
        if (!errorHandedOver) {
            return !channel.isOpen();
        }
        try {
            channel.eventLoop().execute(() -> channel.close());
        } catch (RejectedExecutionException e) {
            channel.close(); // the event loop is shutting down
        }
        return true;
    }

    /** The connection closed: nothing more is sent or handled. */
    void closed() {
        closing.set(true);
    }

    /**
     * Sends ERROR for a refusal, discards what the agent still sends and closes after
     * {@link ErrorLinger#ERROR_LINGER_MILLIS} or when the agent closes ({@link ErrorLinger}): closing on unread
     * bytes sends a TCP reset, which can destroy the ERROR before the agent reads it. Refusals
     * before HELLO_OK linger too, with the same bound: an agent whose first frame is too large or
     * whose token is refused is just as likely still writing, and lingering costs no memory (input is
     * dropped as it is read) and at most {@link ErrorLinger#ERROR_LINGER_MILLIS} of a connection slot, which
     * the connection limits still count.
     */
    void lingerWithError(Channel channel, ErrorCode code, String message) {
        if (closing.compareAndSet(false, true)) {
            ErrorLinger.sendAndClose(channel, ErrorMessage.of(code, message), boundMillis);
            errorHandedOver = true;
        }
    }

    /** Sends ERROR and closes at once: for the timers (no HELLO, idle, a frame slower than the minimum rate), which refuse no frame. */
    void closeWithError(Channel channel, ErrorCode code, String message) {
        if (closing.compareAndSet(false, true)) {
            channel.writeAndFlush(ErrorMessage.of(code, message)).addListener(ChannelFutureListener.CLOSE);
            errorHandedOver = true;
            closeAtTheLatest(channel);
        }
    }

    /**
     * Closes the connection after {@code boundMillis} whether or not its ERROR was written: the close
     * above waits for that write, which never completes while the agent reads nothing, and once
     * {@code closing} is set the idle timeout no longer closes it (its ERROR is the one stuck), so an
     * agent that stops reading would hold the connection for ever. Cancelled when the connection closes.
     */
    void closeAtTheLatest(Channel channel) {
        try {
            var late = channel.eventLoop().schedule(() -> channel.close(), boundMillis, TimeUnit.MILLISECONDS);
            channel.closeFuture().addListener(f -> late.cancel(false));
        } catch (RejectedExecutionException e) {
            channel.close(); // the event loop is shutting down
        }
    }
}
