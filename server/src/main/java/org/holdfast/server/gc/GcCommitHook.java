package org.holdfast.server.gc;

import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.rocksdb.WriteBatch;

/**
 * Drives GC bookkeeping from each snapshot commit: the operation record and the snapshot's expiry
 * go into the commit's own batch ({@link #onCommit}); the GMA updates are logged once the batch is
 * durable ({@link #afterCommit}). See {@link GcService} for the recovery procedure.
 */
public final class GcCommitHook implements CommitHook {
    private final GcService gc;

    public GcCommitHook(GcService gc) {
        this.gc = gc;
    }

    @Override
    public void onCommit(CommittedSnapshot commit, WriteBatch batch) {
        gc.onCommit(commit, batch);
    }

    @Override
    public void afterCommit(CommittedSnapshot commit) {
        gc.afterCommit(commit);
    }
}
