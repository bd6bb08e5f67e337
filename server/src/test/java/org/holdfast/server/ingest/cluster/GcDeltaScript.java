package org.holdfast.server.ingest.cluster;

import java.util.function.IntToLongFunction;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;

/** The GC deltas the worker-link tests send: a commit that references every block, then a deletion that expires the first ones. */
final class GcDeltaScript {
    private GcDeltaScript() {
    }

    /**
     * Operation 1: RC+1 for every PBN; operation 2: RC-1 for the first {@code deleted}, each with the expiry
     * {@code expiryOf} gives its index. Both are acknowledged by the worker when this returns.
     */
    static void commitThenDelete(RemoteGcDeltas deltas, long[] pbns, int deleted, IntToLongFunction expiryOf) {
        UpdateBatch commit = new UpdateBatch();
        for (long p : pbns) {
            commit.add(UpdateKinds.RC_ADD, p, 1);
        }
        deltas.send(1, commit).join();
        UpdateBatch deletion = new UpdateBatch();
        for (int k = 0; k < deleted; k++) {
            deletion.add(UpdateKinds.RC_ADD, pbns[k], -1);
            deletion.add(UpdateKinds.RAISE_EXPIRY, pbns[k], expiryOf.applyAsLong(k));
        }
        deltas.send(2, deletion).join();
    }
}
