package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSweepFailed;
import org.holdfast.common.protocol.Message;

/**
 * The worker's end of the range sweeps on its link to the master (distributed GC): runs the sweep
 * GC_SWEEP asks for ({@link WorkerRangeSweep}, over the range of this registration) on a thread of
 * its own, so that a sweep, which may take long, holds up neither the GC deltas, the data calls nor
 * the dedup calls (each has its own lane), and answers GC_SWEPT with the figures or GC_SWEEP_FAILED.
 * A GC_SWEEP while a sweep runs (on this link or an earlier one of the process) is refused at once,
 * BUSY, on the event loop: nothing queues behind a sweep. A malformed frame is answered ERROR and the
 * link closes before anything runs. A sweep whose link ends before it computed its horizon (queued
 * on the lane, or waiting for the range data) frees nothing: it checks the link right after the
 * horizon, since the link's backups ended with it ({@link WorkerRangeSweep#run}); one whose link
 * ends after that finishes (its horizon was capped by those backups; it is the worker's own work,
 * safe to stop nowhere in between, so its thread is never interrupted) and keeps its result; its
 * answer is dropped.
 */
public final class GcSweepService extends WorkerLinkService {
    private final WorkerRangeSweep sweeps;
    private final PbnRange range;
    private final ExecutorService lane = Executors.newSingleThreadExecutor(new DefaultThreadFactory("holdfast-gc-sweep", true));

    /** Sweeps with {@code sweeps} over {@code range}, the range of this link's REGISTERED. */
    public GcSweepService(WorkerRangeSweep sweeps, PbnRange range) {
        super("GC sweep");
        this.sweeps = sweeps;
        this.range = range;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof GcSweep s)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (!sweeps.tryBegin()) {
            WorkerRangeSweep.Progress p = sweeps.progress();
            ctx.writeAndFlush(GcSweepFailed.of(s.requestId(), GcSweepFailed.BUSY, "a sweep of PBNs " + range + " runs already on this"
                    + " worker (since " + java.time.Instant.ofEpochMilli(p.startedAt()) + ", " + p.freedSoFar() + " blocks freed so far); nothing was started: ask again"
                    + " once it answered"));
            return;
        }
        Channel ch = ctx.channel();
        try {
            lane.execute(() -> {
                Message answer = serve(s, ch);
                if (ch.isActive()) {
                    ctx.writeAndFlush(answer);
                }
            });
        } catch (RejectedExecutionException e) {
            sweeps.cancelBegin();
            ctx.close(); // the link is ending
        }
    }

    private Message serve(GcSweep s, Channel ch) {
        try {
            return sweeps.run(range, s.now(), s.dryRun(), ch::isActive).toWire(s.requestId());
        } catch (WorkerRangeSweep.Refused e) {
            return GcSweepFailed.of(s.requestId(), GcSweepFailed.REFUSED, "GC_SWEEP refused on the worker: " + e.getMessage());
        } catch (RuntimeException e) {
            return GcSweepFailed.of(s.requestId(), GcSweepFailed.FAILED, "GC_SWEEP failed on the worker: " + e.getMessage()
                    + "; what it freed before stays freed, the next sweep goes on");
        }
    }

    @Override
    void linkEnded() {
        // not shutdownNow: a running sweep must not be interrupted (an interrupt closes the FileChannel it
        // writes); one still queued, or before its horizon, sees the channel inactive and frees nothing
        lane.shutdown();
    }
}
