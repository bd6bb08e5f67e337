package org.holdfast.server.gc;

import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.rocksdb.WriteBatch;

/**
 * Drives GC bookkeeping from each snapshot commit: the operation record and the snapshot's expiry
 * go into the commit's own batch; the GMA updates are logged once the batch is durable, by the
 * {@link AfterCommit} the first half returns. See {@link GcService} for the recovery procedure.
 */
public final class GcCommitHook implements CommitHook {
    private final GcService gc;

    public GcCommitHook(GcService gc) {
        this.gc = gc;
    }

    @Override
    public AfterCommit onCommit(CommittedSnapshot commit, WriteBatch batch) {
        return gc.onCommit(commit, batch);
    }
}
