package org.holdfast.server.gc;

import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.gc.bosc.UpdateBatch;

/**
 * How one GC operation's share for a worker travels: as GC_DELTA parts 0, 1, ... of at most
 * {@link ProtocolLimits#MAX_GC_DELTA_UPDATES} updates each, in the share's order. The outbox
 * ({@link RoutedBookkeeping}) and the link ({@code RemoteGcDeltas}) cut them the same way, so a part
 * resent from the outbox is the part the worker may have logged already.
 */
public final class GcDeltaParts {
    private GcDeltaParts() {
    }

    /**
     * The parts of {@code share}, the updates of operation {@code opId} for one worker (none for an
     * empty share); every part is checked ({@link GcDelta}'s own rules) before this returns.
     */
    public static GcDelta[] of(long opId, UpdateBatch share) {
        int max = ProtocolLimits.MAX_GC_DELTA_UPDATES;
        GcDelta[] parts = new GcDelta[(share.size() + max - 1) / max];
        for (int p = 0; p < parts.length; p++) {
            int from = p * max;
            int n = Math.min(max, share.size() - from);
            byte[] kinds = new byte[n];
            long[] pbns = new long[n];
            long[] values = new long[n];
            for (int i = 0; i < n; i++) {
                kinds[i] = (byte) share.kind(from + i);
                pbns[i] = share.pbn(from + i);
                values[i] = share.value(from + i);
            }
            parts[p] = new GcDelta(opId, p, n, kinds, pbns, values);
        }
        return parts;
    }
}
