package org.holdfast.server.catalog;

import java.util.Arrays;

/**
 * Which of a set of PBNs some map entry of the catalog references (any version of any volume:
 * deleted snapshots not yet pruned count): one pass over the maps for the whole set, stopping once
 * every PBN was seen, with memory for the set only (a sorted array and a flag each).
 */
public final class ReferencedPbns {
    private ReferencedPbns() {
    }

    /** Those of {@code pbns} that no map entry of {@code catalog} references, in ascending order. */
    public static long[] unreferenced(Catalog catalog, long[] pbns) {
        long[] sorted = Arrays.stream(pbns).sorted().distinct().toArray();
        boolean[] seen = new boolean[sorted.length];
        int[] left = {sorted.length};
        for (VolumeRecord v : catalog.volumes()) {
            if (left[0] == 0) {
                break;
            }
            catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
                int i = Arrays.binarySearch(sorted, pbn);
                if (i >= 0 && !seen[i]) {
                    seen[i] = true;
                    left[0]--;
                }
                return left[0] > 0;
            });
        }
        long[] out = new long[left[0]];
        int n = 0;
        for (int i = 0; i < sorted.length; i++) {
            if (!seen[i]) {
                out[n++] = sorted[i];
            }
        }
        return out;
    }
}
