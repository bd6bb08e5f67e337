package org.holdfast.server.gc;

import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bookkeeping.GcOperation;

/**
 * Where {@link OperationLog} and {@link CrashRecovery} hand an operation whose record is durable in
 * the catalog: the local GC log of a standalone server ({@link #local}), or the master's routing
 * of each operation's updates to the owners of their PBNs ({@link RoutedBookkeeping}). Either way
 * the master's own BOSC log gets one group per operation id, so {@link #lastAppliedOp()} is its mark.
 */
interface GcBookkeeping {
    /** Accounts for operation {@code opId}; one at or below {@link #lastAppliedOp()} is ignored. Calls come in id order. */
    void apply(long opId, GcOperation op);

    /** The highest operation id the master's own GC log holds (durably, after a restart). */
    long lastAppliedOp();

    /** Today's standalone bookkeeping: every update into the local GC log, unchanged. */
    static GcBookkeeping local(GcBookkeeper bookkeeper) {
        return new GcBookkeeping() {
            @Override
            public void apply(long opId, GcOperation op) {
                bookkeeper.apply(opId, op);
            }

            @Override
            public long lastAppliedOp() {
                return bookkeeper.lastAppliedOp();
            }
        };
    }
}
