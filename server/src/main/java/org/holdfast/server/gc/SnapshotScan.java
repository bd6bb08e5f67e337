package org.holdfast.server.gc;

import java.util.Arrays;
import java.util.function.LongConsumer;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;

/** Reads what the GC needs from the versioned map: a snapshot's PBNs, and a committed snapshot's delta. */
final class SnapshotScan {
    private SnapshotScan() {
    }

    /** Calls {@code sink} with the PBN of every LBN mapped in snapshot {@code seq} (zero blocks included as 0). */
    static void forEachPbn(Catalog catalog, long volume, long seq, long blockCount, LongConsumer sink) {
        try (MapCursor c = catalog.mapCursor(volume)) {
            c.startScan(seq, 0, blockCount);
            while (c.nextMapped()) {
                sink.accept(c.pbn());
            }
        }
    }

    /** The non-zero PBNs of snapshot {@code seq}, one per mapped LBN. */
    static long[] pbns(Catalog catalog, long volume, long seq, long blockCount) {
        long[][] buf = {new long[1024]};
        int[] n = {0};
        forEachPbn(catalog, volume, seq, blockCount, p -> {
            if (p != 0) {
                if (n[0] == buf[0].length) {
                    buf[0] = Arrays.copyOf(buf[0], n[0] * 2);
                }
                buf[0][n[0]++] = p;
            }
        });
        return Arrays.copyOf(buf[0], n[0]);
    }

    /** Receives delta entries in LBN order. */
    @FunctionalInterface
    interface DeltaVisitor {
        void accept(long lbn, long beforePbn, long beforeBirthSequence, long newPbn);
    }

    /**
     * Rebuilds the delta that snapshot {@code seq} committed: its own map entries, each with the
     * version it replaced, in LBN order, without holding it. One pass over the volume's map (only
     * used when re-driving after a crash).
     */
    static void forEachDeltaEntry(Catalog catalog, long volume, long seq, DeltaVisitor sink) {
        long[] pending = {-1, 0}; // lbn, new pbn of an entry born in seq awaiting its older version
        catalog.forEachMapEntry(volume, (lbn, birth, pbn) -> {
            if (pending[0] >= 0 && pending[0] != lbn) {
                sink.accept(pending[0], 0, 0, pending[1]);
                pending[0] = -1;
            }
            if (pending[0] == lbn) {
                sink.accept(lbn, pbn, birth, pending[1]);
                pending[0] = -1;
            } else if (birth == seq) {
                pending[0] = lbn;
                pending[1] = pbn;
            }
            return true;
        });
        if (pending[0] >= 0) {
            sink.accept(pending[0], 0, 0, pending[1]);
        }
    }
}
