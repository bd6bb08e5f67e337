package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.time.Duration;
import org.holdfast.common.id.PbnRange;

/**
 * The master's end of one kind of call to the worker that owns a PBN range (its range store, its
 * grace guard, its sweep): the worker's name and range, the calls in flight by request id
 * ({@link PendingCalls}), and the pipeline handler that completes them from the worker's answers.
 * When the link ends, or a call is not answered within the timeout, every pending and later call
 * fails with the subclass's {@link #lostError}; each subclass says which answers it takes.
 */
abstract class RangeWorkerCalls {
    protected final String name;
    protected final PbnRange range;
    protected final PendingCalls calls;

    /** Worker {@code name} owning {@code range}, on {@code channel}; a call not answered within {@code timeout} ends the link's use. */
    RangeWorkerCalls(String name, PbnRange range, Channel channel, Duration timeout) {
        this.name = name;
        this.range = range;
        this.calls = new PendingCalls(channel, timeout, this::lostError);
    }

    /** The worker's node name. */
    public String name() {
        return name;
    }

    /** The PBN range the worker owns. */
    public PbnRange range() {
        return range;
    }

    /** False once the link ended or a call timed out. */
    public boolean isUp() {
        return calls.isUp();
    }

    /** The link ended or went silent: every pending and later call fails with {@code why}. */
    public void lost(String why) {
        calls.lost(why);
    }

    /** Requests in flight (tests). */
    int pendingCount() {
        return calls.size();
    }

    /** What every pending and later call fails with once the link is lost for {@code why}, in the words of this kind of call. */
    protected abstract RangeWorkerLostException lostError(String why);

    /** Completes the call {@code msg} answers and returns true, or returns false if it is not an answer of this kind. */
    protected abstract boolean answer(Object msg);

    /** The handler that takes this kind's answers from the worker's link; other messages pass on. */
    public ChannelInboundHandlerAdapter answers() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (!answer(msg)) {
                    ctx.fireChannelRead(msg);
                }
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) throws Exception {
                lost("its link closed");
                super.channelInactive(ctx);
            }
        };
    }
}
