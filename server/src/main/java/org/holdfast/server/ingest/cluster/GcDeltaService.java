package org.holdfast.server.ingest.cluster;

import io.netty.channel.ChannelHandlerContext;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.GcDeltaApplied;
import org.holdfast.common.protocol.GcDeltaFailed;
import org.holdfast.common.protocol.Message;

/**
 * The worker's end of the GC deltas on its link to the master (distributed GC, thesis 7.2.4): logs
 * each GC_DELTA once in the worker's GC metadata ({@link WorkerGcMetadata}, opened over the range
 * of this registration), and answers GC_DELTA_APPLIED with the worker's mark once the log is synced;
 * a replay is answered the same way and logs nothing. One delta at a time, on one thread off the
 * event loop, in arrival order ({@link BoundedLane}: a flood pauses the link's reads). A refusal (a PBN outside the range, GC metadata that would not
 * open) is answered GC_DELTA_FAILED, nothing logged, and the link stays; a malformed frame is
 * answered ERROR and the link closes before the GC metadata sees anything. Deltas still queued
 * when the link ends are dropped: the master sends what it has no acknowledgement for again.
 */
public final class GcDeltaService extends WorkerLinkService {
    private static final System.Logger LOG = System.getLogger(GcDeltaService.class.getName());
    private final WorkerGcMetadata gc;
    private final PbnRange range;
    // an archiving range store (backend s3), or null: a node whose range another node took over logs nothing
    private final WorkerRangeData fence;
    private final BoundedLane lane = new BoundedLane("holdfast-gc-delta");

    /** Logs into {@code gc} over {@code range}, the range of this link's REGISTERED; the GC metadata opens on the lane at once. */
    public GcDeltaService(WorkerGcMetadata gc, PbnRange range) {
        this(gc, range, null);
    }

    /**
     * As above; with {@code fence} (the worker's archiving range store, else null) every delta first
     * claims the range store, so a node whose range another node took over from the bucket (a later
     * epoch: its store refuses) answers GC_DELTA_FAILED instead of acknowledging deltas the range's
     * owner never logs.
     */
    public GcDeltaService(WorkerGcMetadata gc, PbnRange range, WorkerRangeData fence) {
        super("GC delta");
        this.gc = gc;
        this.range = range;
        this.fence = fence;
        lane.run(this::open);
    }

    /** Opens the GC metadata (replaying its log after a crash) before the first delta, so a refusal is logged once, at registration. */
    private void open() {
        try {
            gc.claim(range);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot open the GC metadata in " + gc.dir() + " over PBNs " + range + ": " + e.getMessage()
                    + "; every GC delta of the master is refused until that is fixed");
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof GcDelta d)) {
            ctx.fireChannelRead(msg);
            return;
        }
        // an ended link's queued deltas (or a link that sent its ERROR) are dropped: the master sends them again
        lane.submit(ctx, d.count() * 17L + 64, () -> serve(d));
    }

    private Message serve(GcDelta d) {
        try {
            if (fence != null) {
                fence.claim(range); // throws the store's refusal: taken over by another node, say
            }
            long mark = gc.log(d, range);
            return new GcDeltaApplied(GcDelta.opIdOf(mark), GcDelta.partOf(mark));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "GC delta of operation " + d.opId() + " (part " + d.part() + ") failed: " + e.getMessage());
            return GcDeltaFailed.of(d.opId(), d.part(), "GC_DELTA failed on the worker: " + e.getMessage());
        }
    }

    @Override
    void linkEnded() {
        lane.shutdown();
    }
}
