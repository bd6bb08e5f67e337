package org.holdfast.server.gc;

import java.util.List;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * The GC side of {@code catalog-restore} on a master with {@code data=workers}: the workers' counts
 * were kept by deltas the lost master sent after the backup, which the restored catalog knows
 * nothing of. In one synced batch, before the master's own GC metadata is rebuilt:
 *
 * <ul>
 * <li>the GC outbox (entries and routed marks) is dropped: it is older than what the workers applied,
 *     and their counts are rebuilt from the restored catalog instead;</li>
 * <li>{@code gc.next-op-id} jumps by {@link #OP_ID_JUMP}, and at least to the restore's time in
 *     milliseconds: the operation ids the lost master used after the backup are in the workers' logs,
 *     which would take the restored master's new deltas under those ids for replays and drop them (an
 *     increment dropped frees a block in use), and {@code worker-gc-import} refuses a counts file whose
 *     mark is below what the worker applied; a jump too short for the operations after the backup is
 *     refused there, nothing lost. The clock floor is for a backup restored again (the first restored
 *     master lost before a newer catalog backup, or a restore redone): the backup's counter plus the
 *     jump is the same each time, and the ids the first restored master used are in the logs of
 *     workers, among them nodes it registered, which no fence covers;</li>
 * <li>{@code gc.routed-through} goes (the export's routed marks are unknown, not stale);</li>
 * <li>every worker of the restored registry is fenced ({@link WorkerCountsFences}): not swept
 *     until its counts come from the restored catalog;</li>
 * <li>the next {@link #IDS_SKIPPED} worker ids are retired (as if removed): a node the lost master
 *     registered after the backup holds blocks and bucket keys under its id and range, which the
 *     restored registry would give the next new node; it is refused instead (its range data is for
 *     a range the registry no longer gives it), and a new node gets a range nobody used.</li>
 * </ul>
 */
public final class RestoredWorkerCounts {
    /** Operation ids skipped at a restore: more than the operations of a master's life between two catalog backups. */
    public static final long OP_ID_JUMP = 1L << 32;
    /** Worker ids retired at a restore: more than the workers registered between two catalog backups. */
    public static final long IDS_SKIPPED = 64;

    /** What was done: the workers fenced, the outbox entries dropped, the operation counter before and after, the fences' floor. */
    public record Report(List<Long> fenced, long outboxEntriesDropped, long nextOpIdBefore, long nextOpIdAfter, long floor,
                         long idsRetiredThrough) {
    }

    private RestoredWorkerCounts() {
    }

    /** Whether {@code db} is the catalog of a master with {@code data=workers}. */
    public static boolean applies(MetadataDb db) {
        return db.metaLong(FormatVersions.META_CLUSTER_DATA_MODE, 0) == FormatVersions.CLUSTER_DATA_ON_WORKERS;
    }

    /** The first PBN of the restored registry's workers' ranges (the master's own range ends there); the store's limit if none. */
    public static long workersFrom(MetadataDb db) {
        return new ClusterStore(db).workers().stream().mapToLong(w -> w.range().first()).min()
                .orElse(org.holdfast.server.store.DataStore.storedRange(db).limit());
    }

    /** Does the above on the restored catalog of a stopped master (the caller holds its data directory's lock). */
    public static Report run(Catalog catalog, long nowMillis) {
        MetadataDb db = catalog.db();
        if (!applies(db)) {
            throw new IllegalStateException("catalog " + db.path() + " is not a master's with holdfast.cluster.data=workers");
        }
        long before = db.metaLong(GcRecords.NEXT_OP_ID, 1);
        // the clock floor assumes less than one GC operation id a millisecond over a master's life
        long after = Math.max(before + OP_ID_JUMP, nowMillis);
        if (GcDelta.opIdOf(Long.MAX_VALUE) < after) {
            throw new IllegalStateException("the catalog's GC operation counter " + before + " leaves no room for another restore");
        }
        long floor = GcDelta.deltaId(after - 1, GcDelta.MAX_PART); // what WorkerGcExport.markOf gives from now on, at least
        ClusterStore cluster = new ClusterStore(db);
        List<Long> workers = cluster.workers().stream().map(WorkerRecord::workerId).sorted().toList();
        long highest = Math.max(cluster.highestRemovedId(), workers.isEmpty() ? 0 : workers.get(workers.size() - 1));
        long dropped;
        try (MetadataBatch b = new MetadataBatch()) {
            dropped = new GcOutbox(db).discardAll(b);
            db.putMetaLong(b, GcRecords.NEXT_OP_ID, after);
            db.delete(b, MetadataDb.Column.META, GcRecords.ROUTED_THROUGH.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            cluster.retireIdsThrough(b, highest + IDS_SKIPPED);
            WorkerCountsFences fences = new WorkerCountsFences(db);
            for (long w : workers) {
                fences.put(b, w, floor, nowMillis);
            }
            db.write(b, true);
        }
        return new Report(workers, dropped, before, after, floor, highest + IDS_SKIPPED);
    }
}
