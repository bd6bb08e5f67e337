package org.holdfast.server.gc;

import java.util.Arrays;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.MetadataBatch;

/**
 * Deletes the map entries of a volume that no retained snapshot reads any more. An entry born in
 * snapshot b and replaced in snapshot b' (the next newer entry of the same LBN) is read by exactly
 * the snapshots b..b'−1; it goes when none of them is retained. The newest entry of an LBN is read by
 * the newest snapshot, which is always retained, so it always stays. One pass over the volume's map;
 * run after snapshots were deleted. GC counts are untouched: a pruned entry's PBN was dereferenced
 * (with its expiry) when it was replaced.
 */
final class MapPruner {
    private static final int BATCH = 10_000;

    private MapPruner() {
    }

    static long prune(Catalog catalog, VolumeRecord v) {
        long[] retained = catalog.snapshots(v).stream().mapToLong(SnapshotRecord::sequence).toArray();
        Arrays.sort(retained);
        long[] state = {-1, Long.MAX_VALUE, 0, 0}; // current lbn, birth of the newer entry, pending, total
        MetadataBatch[] batch = {new MetadataBatch()};
        try {
            catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
                if (lbn != state[0]) {
                    state[0] = lbn;
                    state[1] = Long.MAX_VALUE;
                }
                long newer = state[1];
                state[1] = birth;
                if (newer != Long.MAX_VALUE && !anyIn(retained, birth, newer - 1)) {
                    catalog.deleteMapEntry(batch[0], v.internalId(), lbn, birth);
                    if (++state[2] == BATCH) {
                        catalog.write(batch[0]);
                        batch[0].close();
                        batch[0] = new MetadataBatch();
                        state[3] += state[2];
                        state[2] = 0;
                    }
                }
                return true;
            });
            if (state[2] > 0) {
                catalog.write(batch[0]);
                state[3] += state[2];
            }
        } finally {
            batch[0].close();
        }
        return state[3];
    }

    private static boolean anyIn(long[] sorted, long from, long to) {
        if (from > to) {
            return false;
        }
        int i = Arrays.binarySearch(sorted, from);
        if (i >= 0) {
            return true;
        }
        int ins = -i - 1;
        return ins < sorted.length && sorted[ins] <= to;
    }
}
