package org.holdfast.server.gc;

import java.lang.System.Logger.Level;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.server.catalog.ReferenceGuard;

/**
 * The ingest's {@link ReferenceGuard} backed by the gc-engine's {@link GraceGuard}: every PBN a
 * session writes or matches gets ET = max(ET, now + grace), durably through BOSC. A PBN the sweep
 * has chosen or freed (its GMA slot is FREED) cannot be protected: {@link #protectOrRefuse} (used by the ingest for
 * duplicates) reports it so the block is stored anew; {@link #protect} fails with
 * {@link ReclaimedBlockException} rather than commit a reference to a freed block. {@link #release} does nothing: committed PBNs are
 * counted, and the grace of abandoned ones simply runs out. {@link #counted} reads the reference
 * count from the GMA, brought up to date with every update logged before the call.
 */
public final class GcReferenceGuard implements ReferenceGuard {
    private static final System.Logger LOG = System.getLogger(GcReferenceGuard.class.getName());

    private final GraceGuard guard;
    private final BoscPipeline pipeline;

    /** The guard of {@code gc}'s grace protection and reference counts. */
    public GcReferenceGuard(GcService gc) {
        this.guard = gc.guard();
        this.pipeline = gc.pipeline();
    }

    @Override
    public void protect(long sessionId, long[] pbns, int off, int count) {
        if (guard.protect(sessionId, pbns, off, count, false) > 0) {
            for (int i = off; i < off + count; i++) {
                // name one refused block; none of the batch was protected, and the session fails
                if (pbns[i] != 0 && guard.refuses(pbns[i])) {
                    throw new ReclaimedBlockException(pbns[i]);
                }
            }
            throw new ReclaimedBlockException(pbns[off]);
        }
    }

    /** Protects what it can; a PBN the sweep has chosen is zeroed so the ingest stores the block anew. */
    @Override
    public int protectOrRefuse(long sessionId, long[] pbns, int off, int count) {
        return guard.protect(sessionId, pbns, off, count, true);
    }

    /**
     * True if the GMA counts a reference to {@code pbn}. A count that cannot be read (the GC
     * pipeline failed) answers false: the caller then treats the block as of unknown domain.
     */
    @Override
    public boolean counted(long pbn) {
        if (!pipeline.layout().holds(pbn)) {
            return false; // no block, or another node's: this GMA counts none of it
        }
        int[] rc = new int[1];
        try {
            pipeline.awaitEnqueued(); // a commit's increments are logged before it returns, queued a little later
            pipeline.withCurrentChunk(pipeline.layout().chunkOf(pbn), chunk -> rc[0] = chunk.rc(pipeline.layout().slotOf(pbn)));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reference count of PBN " + pbn + " unreadable, taken as not counted: " + e.getMessage());
            return false;
        }
        return rc[0] > 0;
    }

    /** The session's protection stops being tied to it (see {@link GraceGuard#sweepHorizon}). */
    @Override
    public void release(long sessionId, boolean committed) {
        guard.sessionEnded(sessionId);
    }
}
