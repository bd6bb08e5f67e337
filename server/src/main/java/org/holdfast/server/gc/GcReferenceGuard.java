package org.holdfast.server.gc;

import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.server.catalog.ReferenceGuard;

/**
 * The ingest's {@link ReferenceGuard} backed by the gc-engine's {@link GraceGuard}: every PBN a
 * session writes or matches gets ET = max(ET, now + grace), durably through BOSC. A PBN the sweep
 * has already chosen cannot be protected: {@link #protectOrRefuse} (used by the ingest for
 * duplicates) reports it so the block is stored anew; {@link #protect} fails with
 * {@link ReclaimedBlockException} rather than commit a reference to a freed block. {@link #release} does nothing: committed PBNs are
 * counted, and the grace of abandoned ones simply runs out.
 */
public final class GcReferenceGuard implements ReferenceGuard {
    private final GraceGuard guard;

    public GcReferenceGuard(GraceGuard guard) {
        this.guard = guard;
    }

    @Override
    public void protect(long sessionId, long[] pbns, int off, int count) {
        if (guard.protect(sessionId, pbns, off, count, false) > 0) {
            for (int i = off; i < off + count; i++) {
                // name one refused block; none of the batch was protected, and the session fails
                if (pbns[i] != 0 && guard.isTombstoned(pbns[i])) {
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

    /** The session's protection stops being tied to it (see {@link GraceGuard#sweepHorizon}). */
    @Override
    public void release(long sessionId, boolean committed) {
        guard.sessionEnded(sessionId);
    }
}
