package org.holdfast.server.store;


/** Test access to the possession index: makes a store look as if its blocks were written before possession proofs existed. */
public final class PossessionTestAccess {
    private PossessionTestAccess() {
    }

    /** The possession index kept in {@code db} (a test master's catalog, which opens no data store). */
    public static PossessionIndex over(MetadataDb db) {
        return new PossessionIndex(db);
    }

    /** Deletes the possession entries of every PBN below {@code store.nextPbn()}. */
    public static void forgetAllPfs(DataStore store) {
        try (MetadataBatch batch = new MetadataBatch()) {
            for (long pbn = 1; pbn < store.nextPbn(); pbn++) {
                store.possession().delete(batch, pbn);
            }
            store.metadata().write(batch, true);
        }
    }
}
