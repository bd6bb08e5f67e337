package org.holdfast.server.store;

/** Test access to the location index: frees blocks as GC would, so that compaction has something to drop. */
public final class LocationTestAccess {
    private LocationTestAccess() {
    }

    /** Drops the locations of {@code pbns} from {@code store}'s index, synced. */
    public static void free(DataStore store, long... pbns) {
        try (MetadataBatch batch = new MetadataBatch()) {
            for (long pbn : pbns) {
                store.locations().delete(batch, pbn);
            }
            store.metadata().write(batch, true);
        }
    }
}
