package org.holdfast.server.ingest.cluster;

import org.holdfast.common.id.Fingerprint;
import org.holdfast.gc.sweep.BlockReclaimer;
import org.holdfast.server.engine.DedupWorker;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.StoredBlock;

/**
 * Frees the blocks a worker's range sweep chose, as the standalone {@code StoreReclaimer} does on
 * a master: first the worker's dedup engine forgets them and flushes (Sungem marks their containers
 * stale: a lookup can never again answer a freed PBN as a duplicate), then their locations are
 * deleted from the range store in one synced batch ({@link DataStore#forget}); their bytes go with
 * the compaction after the sweep. Idempotent: a PBN the store does not know (freed before a crash
 * cut the sweep short) is skipped. Without an engine (a worker that serves no dedup calls) there is
 * nothing to forget. The freed blocks also go to the worker's {@link StaleMarkOutbox} (before their
 * locations go, so a crash cannot lose them), for the master to forward to the other workers' engines
 * once the free is durable ({@link StaleMarkOutbox#ready}).
 */
final class RangeBlockReclaimer implements BlockReclaimer {
    private final DataStore store;
    private final DedupWorker dedup;
    private final StaleMarkOutbox staleMarks;
    private final java.util.function.BooleanSupplier stopping;
    private final StoredBlock scratch = new StoredBlock();
    private long reclaimed;

    /**
     * Frees from {@code store}, telling {@code dedup} first (null: no engine on this worker) and keeping
     * the marks in {@code staleMarks} (null: none kept); refuses each batch once {@code stopping} (the
     * worker process is stopping: the sweep ends between two batches, before the stores close under it).
     */
    RangeBlockReclaimer(DataStore store, DedupWorker dedup, StaleMarkOutbox staleMarks, java.util.function.BooleanSupplier stopping) {
        this.store = store;
        this.dedup = dedup;
        this.staleMarks = staleMarks;
        this.stopping = stopping;
    }

    @Override
    public synchronized void reclaim(long[] pbns, int count) {
        if (stopping.getAsBoolean()) {
            // the sweep ends here: these victims stay tombstoned, unfreed and unmarked, so the next sweep hands them over again
            throw new IllegalStateException("the worker is stopping: the sweep ended before freeing its next " + count + " blocks");
        }
        long[] known = new long[count];
        byte[] fps = new byte[count * Fingerprint.BYTES];
        int n = store.stillStored(pbns, count, known, fps, scratch);
        if (n == 0) {
            return;
        }
        if (dedup != null) {
            // a block of a non-default dedup domain is indexed under its domain key, where the store knows one
            store.possession().indexKeys(known, n, fps);
            dedup.forget(known, fps, n);
            dedup.flush(); // durable before the location goes: a restarted engine must not offer a freed PBN
        }
        if (staleMarks != null) {
            staleMarks.add(known, fps, n); // with the fingerprints as forgotten here (the domain's index key)
        }
        store.forget(known, n);
        reclaimed += n;
        if (staleMarks != null) {
            staleMarks.ready(); // the free is durable: the link may send them now
        }
    }

    /** Blocks freed by this reclaimer so far (the progress of a sweep in flight). */
    synchronized long reclaimed() {
        return reclaimed;
    }
}
