package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.GcDeltaApplied;
import org.holdfast.common.protocol.GcDeltaFailed;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.server.gc.GcDeltaParts;

/**
 * The master's end of one worker's GC deltas (distributed GC, thesis 7.2.4): sends the updates of
 * an operation that lie in the worker's range as GC_DELTA parts (at most
 * {@link ProtocolLimits#MAX_GC_DELTA_UPDATES} updates each, parts 0, 1, ... of the operation's id)
 * and completes each part when a GC_DELTA_APPLIED covers it. An acknowledgement is cumulative (the
 * worker's mark: every delta up to it is durably logged), which is why this does not use
 * {@link PendingCalls}, whose answers name one request each: one APPLIED completes every pending
 * part at or below its mark, and an APPLIED for a delta sent again after a reconnect is the same as
 * the first. A GC_DELTA_FAILED fails its part with {@link RangeWorkerFailedException} (the
 * worker's words; nothing of it logged); when the link ends, or a part is not acknowledged within
 * the timeout, every pending and later part fails with {@link RangeWorkerLostException}: the caller
 * keeps what is not acknowledged and sends it again on the worker's next link. Deltas on one link
 * must go in increasing (operation id, part) order, as the worker's log numbers them.
 * The master's GC sends through it from its outbox ({@link GcDeltaSenders}).
 */
public final class RemoteGcDeltas {
    private final String name;
    private final PbnRange range;
    private final Channel channel;
    private final Duration timeout;
    private final ConcurrentNavigableMap<Long, CompletableFuture<Void>> pending = new ConcurrentSkipListMap<>();
    private volatile long applied; // delta id of the highest acknowledgement
    private long lastSent; // delta id of the last part sent; guarded by this
    private volatile String lost;

    /** Worker {@code name} owning {@code range}, on {@code channel}; a part not acknowledged within {@code timeout} ends the link's use. */
    public RemoteGcDeltas(String name, PbnRange range, Channel channel, Duration timeout) {
        this.name = name;
        this.range = range;
        this.channel = channel;
        this.timeout = timeout;
    }

    /** The worker's node name. */
    public String name() {
        return name;
    }

    /** The PBN range whose GC metadata the worker holds. */
    public PbnRange range() {
        return range;
    }

    /** False once the link ended or a part timed out. */
    public boolean isUp() {
        return lost == null && channel.isActive();
    }

    /** The delta id ({@link GcDelta#deltaId}) of the highest delta the worker acknowledged on this link; 0 before any. */
    public long appliedDeltaId() {
        return applied;
    }

    /**
     * Sends {@code share}, the updates of operation {@code opId} in this worker's range (as
     * {@code UpdateRouter} splits them), as parts of at most {@link ProtocolLimits#MAX_GC_DELTA_UPDATES};
     * completes once the worker acknowledged every part. An empty share sends nothing.
     *
     * @throws IllegalArgumentException an update outside the worker's range (nothing sent)
     */
    public CompletableFuture<Void> send(long opId, UpdateBatch share) {
        for (int i = 0; i < share.size(); i++) {
            if (!range.contains(share.pbn(i))) {
                throw new IllegalArgumentException("update " + i + " of GC operation " + opId + " is for PBN " + share.pbn(i)
                        + ", outside worker " + name + "'s range " + range + "; nothing was sent (route with the membership's ranges)");
            }
        }
        GcDelta[] deltas = GcDeltaParts.of(opId, share); // validates every part before the first is sent
        CompletableFuture<?>[] sent = new CompletableFuture<?>[deltas.length];
        for (int p = 0; p < deltas.length; p++) {
            sent[p] = send(deltas[p]);
        }
        return CompletableFuture.allOf(sent);
    }

    /**
     * Sends one part; completes when a GC_DELTA_APPLIED covers it.
     *
     * @throws IllegalArgumentException an update outside the worker's range, or a part at or below one sent
     *         before on this link (the worker would take it for a replay and log nothing): nothing sent
     */
    public synchronized CompletableFuture<Void> send(GcDelta d) {
        for (int i = 0; i < d.count(); i++) {
            if (!range.contains(d.pbns()[i])) {
                throw new IllegalArgumentException("update " + i + " of GC operation " + d.opId() + " is for PBN " + d.pbns()[i]
                        + ", outside worker " + name + "'s range " + range + "; nothing was sent");
            }
        }
        long id = d.deltaId();
        CompletableFuture<Void> f = new CompletableFuture<>();
        String why = lost;
        if (why != null) {
            f.completeExceptionally(lostError(why));
            return f;
        }
        if (id <= lastSent) {
            throw new IllegalArgumentException("part " + d.part() + " of GC operation " + d.opId() + " comes after part "
                    + GcDelta.partOf(lastSent) + " of operation " + GcDelta.opIdOf(lastSent) + " on worker " + name + "'s link: the"
                    + " worker would take it for a replay and log nothing; send in operation order (nothing was sent)");
        }
        // under this lock: the frames leave in delta id order, which is the order the worker's log needs
        lastSent = id;
        pending.put(id, f);
        why = lost; // lost() may have failed every pending part between the check above and the put
        if (why != null) {
            fail(id, lostError(why));
            return f;
        }
        channel.writeAndFlush(d).addListener(w -> {
            if (!w.isSuccess()) {
                fail(id, lostError("cannot send to it (" + w.cause() + ")"));
            }
        });
        f.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).whenComplete((v, e) -> {
            pending.remove(id, f);
            if (e instanceof TimeoutException) {
                lost("no GC_DELTA_APPLIED within " + timeout.toMillis() + " ms");
            }
        });
        return f;
    }

    /** The link ended or went silent: every pending and later part fails with {@code why}. */
    public void lost(String why) {
        if (lost == null) {
            lost = why;
        }
        for (Long id : pending.keySet()) {
            fail(id, lostError(why));
        }
    }

    /** Parts in flight (tests). */
    int pendingCount() {
        return pending.size();
    }

    private void applied(GcDeltaApplied a) {
        long mark = a.deltaId();
        if (mark > applied) {
            applied = mark;
        }
        for (Map.Entry<Long, CompletableFuture<Void>> e : pending.headMap(mark, true).entrySet()) {
            if (pending.remove(e.getKey(), e.getValue())) {
                e.getValue().complete(null);
            }
        }
    }

    private void failed(GcDeltaFailed f) {
        CompletableFuture<Void> p = pending.remove(f.deltaId());
        if (p == null) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "GC_DELTA_FAILED answers part " + f.part() + " of operation " + f.opId()
                    + ", which is not pending on this link");
        }
        p.completeExceptionally(new RangeWorkerFailedException("GC worker " + name + " (PBNs " + range + ") refused part " + f.part()
                + " of GC operation " + f.opId() + ": " + f.message()));
    }

    private void fail(long id, RuntimeException e) {
        CompletableFuture<Void> f = pending.remove(id);
        if (f != null) {
            f.completeExceptionally(e);
        }
    }

    private RangeWorkerLostException lostError(String why) {
        return new RangeWorkerLostException("GC worker " + name + " (PBNs " + range + ") is lost: " + why + "; the GC deltas it did not"
                + " acknowledge may not be logged: send them again once it registers again (see its log for why)");
    }

    /** The handler that takes this worker's GC_DELTA_APPLIED and GC_DELTA_FAILED; other messages pass on. */
    public ChannelInboundHandlerAdapter answers() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof GcDeltaApplied a) {
                    applied(a);
                } else if (msg instanceof GcDeltaFailed f) {
                    failed(f);
                } else {
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
