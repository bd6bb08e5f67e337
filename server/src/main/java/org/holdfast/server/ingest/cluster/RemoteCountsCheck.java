package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.CountsCheck;
import org.holdfast.common.protocol.CountsChecked;

/**
 * The master's end of one worker's counts checks (the online fsck of data on workers, cluster
 * version 7): COUNTS_CHECK with a fresh request id, completed by the COUNTS_CHECKED that names it
 * ({@link PendingCalls}). A span is at most {@link CountsCheck#MAX_SPAN} PBNs, so lost-after bounds
 * its answer; a link that ends fails the pending check with {@link RangeWorkerLostException}.
 */
public final class RemoteCountsCheck extends RangeWorkerCalls {
    /** Worker {@code name} owning {@code range}, on {@code channel}; a span not answered within {@code timeout} ends this end's use. */
    public RemoteCountsCheck(String name, PbnRange range, Channel channel, Duration timeout) {
        super(name, range, channel, timeout);
    }

    /** Sends the catalog's counts of the span [{@code first}, {@code limit}) (see {@link CountsCheck}); completes with the worker's answer. */
    public CompletableFuture<CountsChecked> check(long first, long limit, long now, long[] pbns, int[] rc, int[] pins, long[] et) {
        long id = calls.nextId();
        return calls.call(id, new CountsCheck(id, first, limit, now, pbns, rc, pins, et)).thenApply(m -> (CountsChecked) m);
    }

    @Override
    protected RangeWorkerLostException lostError(String why) {
        return new RangeWorkerLostException("checking the GC counts of worker " + name + " (PBNs " + range + "): the worker is lost: "
                + why + "; nothing was changed; check again once it registers again");
    }

    /** Takes this worker's COUNTS_CHECKED. */
    @Override
    protected boolean answer(Object msg) {
        if (msg instanceof CountsChecked c) {
            calls.take(c.requestId(), c).complete(c);
            return true;
        }
        return false;
    }
}
