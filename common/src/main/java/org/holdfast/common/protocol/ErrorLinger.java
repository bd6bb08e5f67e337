package org.holdfast.common.protocol;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
import io.netty.util.AttributeKey;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Ends a connection after a refusal so that the peer can read the ERROR: the one place every port
 * (agent, cluster, a worker's dedup link) sends its last ERROR from.
 *
 * <p>Why not write ERROR and close: a peer refused while it is still writing a frame (an oversized
 * frame, a count over a limit, a malformed header) leaves bytes in our receive buffer, and closing
 * a TCP socket with unread bytes sends a reset, which can destroy the ERROR in flight or in the
 * peer's receive buffer: the peer sees "connection reset" or "broken pipe" instead of the reason.
 * So the connection lingers: ERROR is written, every further byte is read and dropped (the
 * channel's {@link FrameDecoder} is put into its discard state: no frame is decoded, nothing is
 * buffered or reserved from a budget; each read's buffer is released as soon as it was skipped),
 * and the connection closes when the peer closes it, when nothing arrived for {@link #QUIET_MILLIS}
 * after the ERROR was written (the peer has stopped writing, so the close sends no reset: a refused
 * connection that is not written to frees its slot at once, and a test or a client that waits for
 * the close waits that long, not the whole linger), {@link #ERROR_LINGER_MILLIS} after the ERROR
 * was written, or at the latest after the caller's hard bound (an ERROR whose write never
 * completes because the peer reads nothing), whichever comes first. A peer that keeps writing
 * for ever is therefore cut off after {@link #ERROR_LINGER_MILLIS}; it costs a socket for that
 * long, which the ports' connection limits count until the close. The ERROR is the last frame:
 * anything written after it is dropped.
 */
public final class ErrorLinger {
    /** How long a refused connection stays open, discarding input, once its ERROR was written. */
    public static final long ERROR_LINGER_MILLIS = 2_000;

    /**
     * A lingering connection on which nothing arrived for this long since the ERROR was written (or
     * since the last bytes) is closed: its peer is reading or gone, not writing.
     */
    public static final long QUIET_MILLIS = 300;

    private static final AttributeKey<Boolean> LINGERING = AttributeKey.valueOf(ErrorLinger.class, "lingering");

    private ErrorLinger() {
    }

    /**
     * Sends {@code error} on {@code channel} and closes it as the class comment says, at the latest
     * {@code atTheLatestMillis} from now (at least {@link #ERROR_LINGER_MILLIS}). Only the first
     * call on a channel does anything. Any thread: on the event loop it runs at once; from another
     * thread it runs after the writes that thread queued before, so the ERROR follows the answers the
     * caller sent before refusing. Anything written after it is dropped.
     */
    public static void sendAndClose(Channel channel, ErrorMessage error, long atTheLatestMillis) {
        if (channel.attr(LINGERING).setIfAbsent(Boolean.TRUE) != null) {
            return;
        }
        long bound = Math.max(ERROR_LINGER_MILLIS, atTheLatestMillis);
        if (channel.eventLoop().inEventLoop()) {
            linger(channel, error, bound);
            return;
        }
        try {
            channel.eventLoop().execute(() -> linger(channel, error, bound));
        } catch (RejectedExecutionException e) {
            channel.close(); // the event loop is shutting down
        }
    }

    /** True once {@link #sendAndClose} was called on {@code channel}. */
    public static boolean isLingering(Channel channel) {
        return channel.hasAttr(LINGERING) && channel.attr(LINGERING).get() != null;
    }

    private static void linger(Channel channel, ErrorMessage error, long atTheLatestMillis) {
        FrameDecoder decoder = channel.pipeline().get(FrameDecoder.class);
        if (decoder != null) {
            decoder.discardInput();
        }
        closeAfter(channel, atTheLatestMillis);
        // read on (a handler may have paused reading: a held HELLO, a full budget or queue) so the
        // peer's bytes are drained rather than left to turn our close into a reset
        channel.config().setAutoRead(true);
        channel.read();
        channel.writeAndFlush(error).addListener(written -> {
            if (written.isSuccess()) {
                closeAfter(channel, ERROR_LINGER_MILLIS);
                if (decoder != null) {
                    closeWhenQuiet(channel, decoder, decoder.discardedBytes());
                }
            } else {
                channel.close(); // the peer is gone: nobody to tell
            }
        });
        // the ERROR is the last frame: an answer a lane thread writes after the refusal (a heartbeat's
        // ACK, a dedup answer) must not follow it on a connection that stays open for the linger
        ChannelHandlerContext encoder = channel.pipeline().context(FrameEncoder.class);
        if (encoder != null) {
            channel.pipeline().addBefore(encoder.name(), "error-sent", new Sealed());
        }
    }

    /** Drops every write after the ERROR (the write fails as on a closed channel). Placed on the head's side of the encoder. */
    private static final class Sealed extends ChannelOutboundHandlerAdapter {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ReferenceCountUtil.release(msg);
            promise.tryFailure(new ClosedChannelException());
        }
    }

    /** Closes {@code channel} once {@link #QUIET_MILLIS} pass in which {@code decoder} dropped no byte beyond {@code seen}. */
    private static void closeWhenQuiet(Channel channel, FrameDecoder decoder, long seen) {
        if (!channel.isOpen()) {
            return;
        }
        try {
            channel.eventLoop().schedule(() -> {
                long now = decoder.discardedBytes();
                if (now == seen) {
                    channel.close();
                } else {
                    closeWhenQuiet(channel, decoder, now);
                }
            }, QUIET_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            channel.close();
        }
    }

    /** Closes {@code channel} after {@code millis}; the timer goes when the channel closes earlier. */
    private static void closeAfter(Channel channel, long millis) {
        try {
            var timer = channel.eventLoop().schedule(() -> channel.close(), millis, TimeUnit.MILLISECONDS);
            channel.closeFuture().addListener(f -> timer.cancel(false));
        } catch (RejectedExecutionException e) {
            channel.close();
        }
    }
}
