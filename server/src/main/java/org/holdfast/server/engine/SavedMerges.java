package org.holdfast.server.engine;

import java.util.Arrays;

/**
 * The merges of one master stream's lookups that are not recorded yet (which worker resolved each
 * entry, one byte per entry), so that {@link ClusterDedupStream#record} does not have to broadcast
 * the lookup again. The ingest looks up every segment of a batch before it records any, and a batch
 * of scattered changes holds many short segments, so the bound is on entries (1 Mi, so 1 MiB) and
 * on lookups (4096), oldest dropped first; a dropped merge only costs a second broadcast.
 *
 * <p>Found by a hash of the fingerprints and the count (a collision routes entries to a worker that
 * did not resolve them, which then stores them anew: space, never correctness). Searched newest
 * first for the engine's usual lookup-then-record, then oldest first for the ingest's batches.
 * Allocation: one array per lookup, of its entry count.
 */
final class SavedMerges {
    static final int MAX_LOOKUPS = 4096;
    static final int MAX_ENTRIES = 1 << 20;

    private final long[] keys = new long[MAX_LOOKUPS];
    private final int[] counts = new int[MAX_LOOKUPS];
    private final byte[][] owners = new byte[MAX_LOOKUPS][];
    private int first;
    private int size;
    private long entries;

    /** Keeps a merge of {@code count} entries for the lookup with {@code key}; returns the array to fill. */
    byte[] add(long key, int count) {
        while (size > 0 && (size == MAX_LOOKUPS || entries + count > MAX_ENTRIES)) {
            drop(first);
            first = (first + 1) % MAX_LOOKUPS;
            size--;
        }
        int at = (first + size) % MAX_LOOKUPS;
        size++;
        keys[at] = key;
        counts[at] = count;
        owners[at] = new byte[count];
        // a lookup that fails half way leaves misses (-1), not worker 0, for a record that finds it
        Arrays.fill(owners[at], (byte) -1);
        entries += count;
        return owners[at];
    }

    /** The merge kept for {@code key} and {@code count}, now given up; null if none is kept. */
    byte[] take(long key, int count) {
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
        byte[] owner = owners[at];
        drop(at);
        while (size > 0 && owners[first] == null) {
            first = (first + 1) % MAX_LOOKUPS;
            size--;
        }
        return owner;
    }

    /** Lookups kept (tests). */
    int size() {
        return size;
    }

    private boolean matches(int i, long key, int count) {
        return owners[i] != null && counts[i] == count && keys[i] == key;
    }

    private void drop(int i) {
        if (owners[i] != null) {
            entries -= counts[i];
            owners[i] = null;
        }
    }
}
