package org.holdfast.server.ingest.cluster;

import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.sweep.GraceGuard;

/**
 * Gives every block a worker appends for a DATA_STORE of one link a grace expiry of its own in the
 * range's GC metadata, recorded first among the link's answered stores ({@link AnsweredStores}), so
 * a block whose answer the link lost is freed by the range's sweep after the grace instead of never.
 * One per link, used on its data lane only; {@link #NONE} on a worker without GC metadata.
 */
final class StoredBlockExpiry {
    private static final System.Logger LOG = System.getLogger(StoredBlockExpiry.class.getName());
    /** No GC metadata: stored blocks get no expiry (never swept). */
    static final StoredBlockExpiry NONE = new StoredBlockExpiry(null, null);

    private final WorkerGcMetadata gc;
    private final AnsweredStores.Link link;
    private GraceGuard guard; // from open(); null: the GC metadata did not open, nothing raised
    private BoscPipeline pipeline; // the guard's
    private boolean raisedSinceSync;
    private long[] pbns;
    private boolean failureReported;

    /** For the stores of {@code link} (answered over it), raised in {@code gc}'s guard. */
    StoredBlockExpiry(WorkerGcMetadata gc, AnsweredStores.Link link) {
        this.gc = gc;
        this.link = link;
    }

    /** Takes the guard once the GC metadata was claimed over the link's range (on the lane, before any store): not per store through its lock, which a delta holds across its fsync. */
    void open() {
        if (gc != null) {
            guard = gc.guard();
            pipeline = gc.pipeline();
        }
    }

    /** Blocks {@code first..first+count)} were just appended for a DATA_STORE of this link, about to be answered. */
    void stored(long first, int count) {
        GraceGuard g = guard;
        if (g == null) {
            return;
        }
        long at = link.answered(first, count);
        if (at < 0) {
            return; // the link keeps too many unprotected stores (AnsweredStores): left untracked, never swept
        }
        if (pbns == null) {
            pbns = new long[ProtocolLimits.MAX_FRAME_MEMBERS];
        }
        for (int k = 0; k < count; k++) {
            pbns[k] = first + k;
        }
        try {
            g.protectStored(pbns, 0, count, at); // new PBNs: never tombstoned
            raisedSinceSync = true;
        } catch (RuntimeException e) {
            // the block is stored all the same and answered: without its expiry it is never swept (a leak, as before)
            if (!failureReported) {
                failureReported = true;
                LOG.log(System.Logger.Level.WARNING, "could not give blocks stored over this link their grace expiry in " + gc.dir()
                        + " (" + e.getMessage() + "); they are stored and answered, but one whose answer is lost is never freed");
            }
        }
    }

    /**
     * Before a DATA_SYNC makes the stored blocks durable: their expiries first, so that a block a crash
     * keeps never lacks its own (a lost one is freed after the grace, not kept forever).
     */
    void beforeSync() {
        if (raisedSinceSync && pipeline != null) {
            raisedSinceSync = false;
            try {
                pipeline.awaitDurable();
            } catch (RuntimeException e) {
                // the sync goes on: a block without a durable expiry is never swept (a leak, as before), never lost
            }
        }
    }

    /** The link ended. */
    void linkEnded() {
        if (link != null) {
            link.close();
        }
    }
}
