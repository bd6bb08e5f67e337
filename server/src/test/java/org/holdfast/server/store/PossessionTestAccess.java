package org.holdfast.server.store;

import org.rocksdb.WriteBatch;

/** Test access to the possession index: makes a store look as if its blocks were written before possession proofs existed. */
public final class PossessionTestAccess {
    private PossessionTestAccess() {
    }

    /** Deletes the possession entries of every PBN below {@code store.nextPbn()}. */
    public static void forgetAllPfs(DataStore store) {
        try (WriteBatch batch = new WriteBatch()) {
            for (long pbn = 1; pbn < store.nextPbn(); pbn++) {
                store.possession().delete(batch, pbn);
            }
            store.metadata().write(batch, true);
        }
    }
}
