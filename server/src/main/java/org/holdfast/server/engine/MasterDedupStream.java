package org.holdfast.server.engine;

import java.util.List;

/**
 * What every backup session's stream on the master holds, whatever the {@link ClusterMode}: the
 * cluster index, its workers, and the stream id the workers know the session by; closing it once
 * closes that stream on every worker.
 */
abstract class MasterDedupStream implements DedupStream {
    final ClusterFingerprintIndex idx;
    final List<DedupWorker> workers;
    final long id;
    private boolean closed;

    MasterDedupStream(ClusterFingerprintIndex idx, long id) {
        this.idx = idx;
        this.workers = idx.workers;
        this.id = id;
    }

    @Override
    public final void close() {
        if (!closed) {
            closed = true;
            idx.closeStream(id);
        }
    }

    /** True once {@link #close} ran: lookups and records are refused. */
    final boolean closed() {
        return closed;
    }
}
