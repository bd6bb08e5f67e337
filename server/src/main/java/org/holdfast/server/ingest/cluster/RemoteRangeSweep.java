package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSweepFailed;
import org.holdfast.common.protocol.GcSwept;

/**
 * The master's end of one worker's range sweeps (distributed GC): GC_SWEEP with a fresh request id,
 * completed by the GC_SWEPT or GC_SWEEP_FAILED that names it ({@link PendingCalls}). A sweep may
 * take long, so a call's own timeout is {@link #ANSWER_TIMEOUT}, not lost-after: whether the worker
 * is alive is the link's heartbeat's to say, and a link that ends fails the pending sweep with
 * {@link RangeWorkerLostException}. A caller that waits less ({@link WorkerSweeps}) just stops
 * waiting; the answer, when it comes, still completes the call.
 */
public final class RemoteRangeSweep extends RangeWorkerCalls {
    /** How long a sweep may run before this end gives up on its answer (and on this link's sweeps). */
    public static final Duration ANSWER_TIMEOUT = Duration.ofHours(12);


    /** Worker {@code name} owning {@code range}, on {@code channel}; a sweep not answered within {@code timeout} ends this end's use. */
    public RemoteRangeSweep(String name, PbnRange range, Channel channel, Duration timeout) {
        super(name, range, channel, timeout);
    }

    /**
     * Asks the worker to sweep its range as of {@code now} (epoch ms; {@link GcSweep#NO_TIME}: its own
     * clock), counting only if {@code dryRun}; completes with its figures. Fails with
     * {@link RangeSweepRefusedException} (busy, refused, failed) or {@link RangeWorkerLostException}.
     */
    public CompletableFuture<GcSwept> sweep(long now, boolean dryRun) {
        long id = calls.nextId();
        return calls.call(id, new GcSweep(id, now, dryRun ? GcSweep.DRY_RUN : 0)).thenApply(m -> (GcSwept) m);
    }

    @Override
    protected RangeWorkerLostException lostError(String why) {
        return new RangeWorkerLostException("sweeping worker " + name + " (PBNs " + range + ") is lost: " + why + "; whether its sweep"
                + " finished is not known (it goes on by itself if the process lives, and keeps its result in its log); ask again once it"
                + " registers again");
    }

    /** Takes this worker's GC_SWEPT and GC_SWEEP_FAILED. */
    @Override
    protected boolean answer(Object msg) {
        if (msg instanceof GcSwept s) {
            calls.take(s.requestId(), s).complete(s);
        } else if (msg instanceof GcSweepFailed f) {
            calls.take(f.requestId(), f).completeExceptionally(new RangeSweepRefusedException(f.reason(), "worker " + name
                    + " (PBNs " + range + ") " + (f.reason() == GcSweepFailed.BUSY ? "is busy" : f.reason() == GcSweepFailed.REFUSED
                    ? "refused the sweep" : "failed the sweep") + ": " + f.message()));
        } else {
            return false;
        }
        return true;
    }
}
