package org.holdfast.server.app;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.TakeoverFence;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.object.ObjectStore;

/**
 * The takeover side of {@code catalog-restore} on a master with {@code data=workers}: a range taken
 * over after the backup has a higher epoch in the bucket than the restored fence, so the master
 * would register the old node again and only that node's own bucket check would keep it from
 * serving. Each restored worker's fence is raised to the highest epoch the bucket holds of it (the
 * epoch the workers' check enforces anyway); the PBN floor stays.
 */
final class RestoredTakeoverFences {
    /** Worker {@code workerId}'s fence raised from epoch {@code from} to the bucket's {@code to}. */
    record Raised(long workerId, long from, long to) {
    }

    private RestoredTakeoverFences() {
    }

    /** Raises the fences of {@code db}'s workers (a stopped master's restored catalog) to {@code objects}' epochs; synced. */
    static List<Raised> raise(MetadataDb db, ObjectStore objects) {
        ClusterStore cluster = new ClusterStore(db);
        Map<Long, TakeoverFence> fences = cluster.takeoverFences();
        List<Raised> out = new ArrayList<>();
        for (WorkerRecord w : cluster.workers()) {
            long inBucket = RangeTakeover.highestEpoch(w.workerId(), objects);
            TakeoverFence f = fences.getOrDefault(w.workerId(), TakeoverFence.NONE);
            if (inBucket > f.archiveEpoch()) {
                cluster.putTakeoverFence(w.workerId(), new TakeoverFence(inBucket, f.pbnFloor()), true);
                out.add(new Raised(w.workerId(), f.archiveEpoch(), inBucket));
            }
        }
        return out;
    }
}
