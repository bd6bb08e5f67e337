package org.holdfast.server.store;

import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;
import org.holdfast.common.id.Fingerprint;

/**
 * Marks bad every block the location index names in a data log that a read found missing (its
 * file gone and, with an object store, its object too), as verify and catalog-restore do: marking
 * only the block read would leave its neighbours unmarked, so their volumes would not be flagged
 * and each incremental on top would inherit the hole. Each log is swept once while the store is
 * open; a later read of another of its blocks finds them marked already.
 */
final class MissingLogSweep {
    private static final System.Logger LOG = System.getLogger(MissingLogSweep.class.getName());

    private final LocationIndex locations;
    private final BadBlocks bad;
    private final Path dir;
    private final Set<Integer> swept = ConcurrentHashMap.newKeySet();
    private volatile IntConsumer onSwept = id -> { };

    MissingLogSweep(LocationIndex locations, BadBlocks bad, Path dir) {
        this.locations = locations;
        this.bad = bad;
        this.dir = dir;
    }

    /** Calls {@code listener} with the id of each missing log after its blocks were newly marked (on the reading thread). */
    void onSwept(IntConsumer listener) {
        this.onSwept = listener;
    }

    /** How many logs were swept since the store opened. */
    int sweeps() {
        return swept.size();
    }

    /**
     * Marks every block of log {@code logId} bad in synced batches of {@link StoreAfterRestore#MARK_BATCH},
     * unless the log was swept before; returns how many were newly marked. A failed mark write is
     * logged, not thrown: the read's own failure is what its caller must see.
     */
    int sweep(int logId) {
        if (!swept.add(logId)) {
            return 0;
        }
        String file = dir.resolve(DataLog.fileName(logId)).toString();
        List<BadBlocks.Mark> batch = new ArrayList<>();
        int[] marked = new int[1];
        try {
            locations.forEachLocation((pbn, id, offset, location, fps, fpOff) -> {
                if (id == logId) {
                    batch.add(new BadBlocks.Mark(pbn, Arrays.copyOfRange(fps, fpOff, fpOff + Fingerprint.BYTES), file,
                            "data log is missing (record at offset " + offset + ")"));
                    if (batch.size() == StoreAfterRestore.MARK_BATCH) {
                        marked[0] += bad.markAll(batch);
                        batch.clear();
                    }
                }
                return true;
            });
            if (!batch.isEmpty()) {
                marked[0] += bad.markAll(batch);
            }
        } catch (StoreException e) {
            swept.remove(logId); // the next read tries again
            LOG.log(Level.WARNING, "cannot mark the blocks of missing data log " + file + " bad: " + e.getMessage());
            return marked[0];
        }
        if (marked[0] > 0) {
            try {
                onSwept.accept(logId);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "flagging the snapshots that use missing data log " + file + " failed: " + e.getMessage()
                        + "; the next verify pass flags them");
            }
        }
        return marked[0];
    }
}
