package org.holdfast.server.gc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.holdfast.server.catalog.ReferenceGuard;

/**
 * The ingest's reference guard, remembering each PBN it protected: a test can wait until a session's
 * new blocks are protected (the ingest protects a BLOCKS frame's blocks after storing all of them)
 * instead of sleeping a while after they were stored.
 */
final class RecordingReferenceGuard implements ReferenceGuard {
    private final ReferenceGuard guard;
    private final Set<Long> protectedPbns = ConcurrentHashMap.newKeySet();

    RecordingReferenceGuard(ReferenceGuard guard) {
        this.guard = guard;
    }

    @Override
    public void protect(long sessionId, long[] pbns, int off, int count) {
        guard.protect(sessionId, pbns, off, count);
        remember(pbns, off, count);
    }

    @Override
    public int protectOrRefuse(long sessionId, long[] pbns, int off, int count) {
        int refused = guard.protectOrRefuse(sessionId, pbns, off, count);
        remember(pbns, off, count); // a refused PBN is 0 now: not remembered
        return refused;
    }

    @Override
    public boolean counted(long pbn) {
        return guard.counted(pbn);
    }

    @Override
    public void release(long sessionId, boolean committed) {
        guard.release(sessionId, committed);
    }

    /** True if every PBN in [{@code from}, {@code to}) was protected. */
    boolean protectedAll(long from, long to) {
        for (long pbn = from; pbn < to; pbn++) {
            if (!protectedPbns.contains(pbn)) {
                return false;
            }
        }
        return true;
    }

    private void remember(long[] pbns, int off, int count) {
        for (int i = off; i < off + count; i++) {
            if (pbns[i] != 0) {
                protectedPbns.add(pbns[i]);
            }
        }
    }
}
