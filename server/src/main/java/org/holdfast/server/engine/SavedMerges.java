package org.holdfast.server.engine;

/**
 * The merges of one master stream's lookups that are not recorded yet, each with the placement run
 * right after it (per entry the worker that resolved it and the worker that stores it, a byte each),
 * so that {@link ClusterDedupStream#record} neither broadcasts the lookup again nor places again: the
 * storing worker announced at lookup is the one the record sends the entry to. The ingest looks up
 * every segment of a batch before it records any, and a batch of scattered changes holds many short
 * segments, so the bound is on entries (1 Mi, so 2 MiB) and on lookups (4096), oldest dropped first;
 * a dropped merge costs a second broadcast and, unless the caller hands the storing workers to the
 * record, a second placement (see {@link ClusterDedupStream}).
 *
 * <p>Found by a hash of the fingerprints and the count (a collision routes entries to a worker that
 * did not resolve them, which then stores them anew: space, never correctness). Searched newest
 * first for the engine's usual lookup-then-record, then oldest first for the ingest's batches.
 * Allocation: two arrays per lookup, of its entry count.
 */
final class SavedMerges {
    static final int MAX_LOOKUPS = 4096;
    static final int MAX_ENTRIES = 1 << 20;

    /** One lookup's merge and placement. */
    static final class Merge {
        /** Per entry the worker whose answer the merge kept, -1 for a miss. */
        final byte[] resolver;
        /**
         * Per entry the worker that stores it if the session stores it, by its number in the stream's
         * index (fixed for the stream's life; {@link DedupStream#storingWorkers} names it by member id).
         */
        final byte[] storer;

        Merge(int count) {
            resolver = new byte[count];
            storer = new byte[count];
        }

        int count() {
            return resolver.length;
        }
    }

    private final long[] keys = new long[MAX_LOOKUPS];
    private final Merge[] merges = new Merge[MAX_LOOKUPS];
    private int first;
    private int size;
    private long entries;

    /** Keeps {@code merge}, complete, for the lookup with {@code key}, dropping the oldest kept ones past the bounds. */
    void keep(long key, Merge merge) {
        int count = merge.count();
        while (size > 0 && (size == MAX_LOOKUPS || entries + count > MAX_ENTRIES)) {
            drop(first);
            first = (first + 1) % MAX_LOOKUPS;
            size--;
        }
        int at = (first + size) % MAX_LOOKUPS;
        size++;
        keys[at] = key;
        merges[at] = merge;
        entries += count;
    }

    /** The merge kept for {@code key} and {@code count}, now given up; null if none is kept. */
    Merge take(long key, int count) {
        if (size == 0) {
            return null;
        }
        int newest = (first + size - 1) % MAX_LOOKUPS;
        int at = matches(newest, key, count) ? newest : -1;
        for (int j = 0; j < size && at < 0; j++) {
            int i = (first + j) % MAX_LOOKUPS;
            if (matches(i, key, count)) {
                at = i;
            }
        }
        if (at < 0) {
            return null;
        }
        Merge m = merges[at];
        drop(at);
        while (size > 0 && merges[first] == null) {
            first = (first + 1) % MAX_LOOKUPS;
            size--;
        }
        return m;
    }

    /** Lookups kept (tests). */
    int size() {
        return size;
    }

    private boolean matches(int i, long key, int count) {
        return merges[i] != null && merges[i].count() == count && keys[i] == key;
    }

    private void drop(int i) {
        if (merges[i] != null) {
            entries -= merges[i].count();
            merges[i] = null;
        }
    }
}
