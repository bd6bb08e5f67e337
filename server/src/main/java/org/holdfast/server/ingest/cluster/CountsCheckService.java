package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.CountsCheck;
import org.holdfast.common.protocol.CountsChecked;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.StoredBlock;

/**
 * The worker's end of the online check of its GC counts (cluster version 7): compares each
 * COUNTS_CHECK span with its GC metadata ({@link CountsSpanCheck}) on a thread of its own, so the
 * deltas, data and dedup lanes never wait for it, and answers COUNTS_CHECKED. A span outside this
 * registration's range, a GC metadata not open or marked counts-lost, or a range store not open,
 * is answered refused with the reason; nothing is changed either way. A malformed or oversized frame is answered ERROR and
 * the link closes before anything runs (the decoder's rule).
 */
public final class CountsCheckService extends WorkerLinkService {
    private final WorkerGcMetadata gc;
    private final WorkerRangeData rangeData;
    private final PbnRange range;
    private final ExecutorService lane = Executors.newSingleThreadExecutor(new DefaultThreadFactory("holdfast-counts-check", true));

    /** Checks against {@code gc} and {@code rangeData} (null: the blocks are not looked up) over {@code range}, this link's range. */
    public CountsCheckService(WorkerGcMetadata gc, WorkerRangeData rangeData, PbnRange range) {
        super("counts check");
        this.gc = gc;
        this.rangeData = rangeData;
        this.range = range;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof CountsCheck c)) {
            ctx.fireChannelRead(msg);
            return;
        }
        Channel ch = ctx.channel();
        try {
            lane.execute(() -> {
                CountsChecked answer = serve(c);
                if (ch.isActive()) {
                    ctx.writeAndFlush(answer);
                }
            });
        } catch (RejectedExecutionException e) {
            ctx.close(); // the link is ending
        }
    }

    /** The answer to {@code c}: the comparison, or why there is none. */
    CountsChecked serve(CountsCheck c) {
        if (c.first() < range.first() || c.limit() > range.limit()) {
            return CountsChecked.refused(c.requestId(), "COUNTS_CHECK refused: PBNs [" + c.first() + ", " + c.limit() + ") are not all"
                    + " in this worker's range " + range + " (a master with another membership?); nothing was compared");
        }
        if (gc.countsLost()) {
            return CountsChecked.refused(c.requestId(), "COUNTS_CHECK refused: this worker's GC metadata is marked counts-lost"
                    + " (its reference counts are known lost): rebuild them (gc-rebuild --worker N on the master, worker-gc-import"
                    + " here, docs/operations.md); nothing was compared");
        }
        BoscPipeline p;
        try {
            p = gc.claim(range);
        } catch (RuntimeException e) {
            return CountsChecked.refused(c.requestId(), "COUNTS_CHECK refused: this worker's GC metadata cannot be opened: "
                    + e.getMessage());
        }
        DataStore store = rangeData == null ? null : rangeData.store();
        if (rangeData != null && store == null) {
            // its open was refused (the range taken over by another node, a bucket not listed) or is still to come: every block
            // would count as held, and a worker that serves none of them would be reported clean
            return CountsChecked.refused(c.requestId(), "COUNTS_CHECK refused: this worker's range store in " + rangeData.dir()
                    + " is not open (its open was refused, see this worker's log, or has not run yet), so its blocks cannot be"
                    + " looked up; nothing was compared: check again once it serves data calls");
        }
        StoredBlock scratch = new StoredBlock();
        try {
            return new CountsSpanCheck(p, pbn -> store == null || store.fingerprint(pbn, scratch)).run(c);
        } catch (RuntimeException e) {
            return CountsChecked.refused(c.requestId(), "COUNTS_CHECK failed on the worker: " + e.getMessage() + "; nothing was changed");
        }
    }

    @Override
    void linkEnded() {
        // not shutdownNow: an interrupt would close the GMA's FileChannel under the comparison; a queued one's answer is dropped
        lane.shutdown();
    }
}
