package org.holdfast.server.ingest.cluster;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * A service on the worker's end of its link to the master ({@link DedupService}, {@link RangeDataService},
 * {@link GcDeltaService}, {@link GcGuardService}, {@link GcSweepService}, {@link CountsCheckService}): each
 * refuses a frame it cannot read the one way ({@link BadMasterFrame}) and passes any other failure on, and
 * stops its own lane ({@link #linkEnded}) when the link ends, before the end passes on.
 */
abstract class WorkerLinkService extends ChannelInboundHandlerAdapter {
    private final String frames;

    /** A service of the link's {@code frames} ("dedup", "data", "GC delta", ...), as a refusal names them in the log. */
    WorkerLinkService(String frames) {
        this.frames = frames;
    }

    @Override
    public final void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (!BadMasterFrame.refuse(ctx, cause, frames)) {
            super.exceptionCaught(ctx, cause);
        }
    }

    @Override
    public final void channelInactive(ChannelHandlerContext ctx) throws Exception {
        linkEnded();
        super.channelInactive(ctx);
    }

    /** The link ended (event loop): the service stops taking requests on its lane; what is queued there drops its answer. */
    abstract void linkEnded();
}
