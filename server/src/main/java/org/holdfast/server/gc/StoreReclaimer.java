package org.holdfast.server.gc;

import org.holdfast.common.id.Fingerprint;
import org.holdfast.gc.sweep.BlockReclaimer;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;

/**
 * Frees blocks for the sweep: first the fingerprint index forgets them (so the engine can never
 * answer "duplicate" with a freed PBN; Sungem marks their containers stale), then their locations are
 * deleted in one synced batch ({@link DataStore#forget}), which makes the data store treat them as
 * gone (with their possession entries); their bytes in the data logs are reclaimed by compaction, which runs after the sweep. Idempotent: an unknown PBN (already freed) is skipped.
 */
public final class StoreReclaimer implements BlockReclaimer {
    private final DataStore store;
    private final FingerprintIndex index;
    private final MetadataDb db;
    private final StoredBlock scratch = new StoredBlock();
    private long reclaimed;

    public StoreReclaimer(DataStore store, FingerprintIndex index, MetadataDb db) {
        this.store = store;
        this.index = index;
        this.db = db;
    }

    @Override
    public synchronized void reclaim(long[] pbns, int count) {
        if (index == null) {
            throw new IllegalStateException("this GC instance is read-only (no fingerprint index): it cannot free blocks");
        }
        long[] known = new long[count];
        byte[] fps = new byte[count * Fingerprint.BYTES];
        int n = store.stillStored(pbns, count, known, fps, scratch);
        if (n == 0) {
            return;
        }
        // A block of a non-default dedup domain is indexed under its domain key, not its fingerprint.
        store.possession().indexKeys(known, n, fps);
        index.forgetAll(known, fps, n);
        index.flush();
        store.forget(known, n); // atomic with respect to a compaction's relocation: never resurrected
        reclaimed += n;
    }

    /** Blocks freed by this instance. */
    public synchronized long reclaimed() {
        return reclaimed;
    }
}
