package org.holdfast.server.gc;

import java.util.List;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.GcStoreException;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.StorageFullException;
import org.holdfast.server.store.StoreException;

/**
 * Numbers the GC operations and hands them to the bookkeeping ({@link GcBookkeeping}: the local GC
 * log, or a master's routing to the owners) in order. An operation's record
 * {@code gc/o<id>} and the advanced {@code gc.next-op-id} go into the same synced catalog batch as
 * the change it accounts for ({@link #record}); only once that batch is durable is the id consumed
 * ({@link #written}) and the operation logged ({@link #apply}). Records at or below the GC log's
 * durable mark are trimmed after each cycle ({@link #trimUpTo}).
 *
 * <p>Lock: {@link #nextId}, {@link #written} and {@link #apply} are called under the commit monitor
 * (the {@code SnapshotCommit} object), or at open before any commit can run; that is what keeps ids
 * in order and unique. The failure is volatile, so any thread may check it.
 */
final class OperationLog {
    private static final System.Logger LOG = System.getLogger(GcService.class.getName());

    private final Catalog catalog;
    private final GcRecords records;
    private final GcBookkeeping bookkeeping;
    private long nextOpId;
    /**
     * Set when an operation could not be logged (a full disk): no later one may be logged before it.
     * The next {@link #apply} or {@link #requireHealthy} re-drives the waiting records in order, as a
     * start would, and clears it once that works: GC resumes without a restart once space is back.
     */
    private volatile RuntimeException failure;
    private Runnable redrive = () -> {
        throw new IllegalStateException("no re-drive configured");
    };
    private java.util.function.Supplier<Object> commitMonitor = Object::new;
    /** What waits for bookkeeping to be healthy again ({@link #whenHealthy}); guarded by {@code this}, as the clearing of {@link #failure}. */
    private List<Runnable> waiting = new java.util.ArrayList<>();

    OperationLog(Catalog catalog, GcRecords records, GcBookkeeping bookkeeping) {
        this.catalog = catalog;
        this.records = records;
        this.bookkeeping = bookkeeping;
        this.nextOpId = catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1);
    }

    /** How to re-drive the records the GC log lacks ({@code CrashRecovery}), under which monitor (the commits'). */
    void resumeWith(Runnable redrive, java.util.function.Supplier<Object> commitMonitor) {
        this.redrive = redrive;
        this.commitMonitor = commitMonitor;
    }

    /** The id the next operation gets; it is consumed by {@link #written}. */
    long nextId() {
        return nextOpId;
    }

    /** Adds the operation's record, and the id counter moved past every id it uses ({@link GcRecords.Op#parts}), to {@code batch}. */
    void record(MetadataBatch batch, GcRecords.Op op) {
        records.putOp(batch, op);
        catalog.db().putMetaLong(batch, GcRecords.NEXT_OP_ID, op.lastId() + 1);
    }

    /** The batch holding operation {@code opId} is durable: the next operation gets the next id. */
    void written(long opId) {
        nextOpId = opId + 1;
    }

    /** Operation {@code opId} was re-driven at open: later ones must count on from it. */
    void redriven(long opId) {
        nextOpId = Math.max(nextOpId, opId + 1);
    }

    /**
     * Logs an operation whose record is already durable in the catalog. After a failure nothing more
     * is logged (a later id would hide the failed one from the re-drive); the records wait in the
     * catalog and the next start re-drives them in order. Never throws: the catalog change stands.
     */
    void apply(long opId, GcOperation op) {
        if (failure != null) {
            tryResume(); // re-drives this operation too: its record is durable in the catalog
            return;
        }
        try {
            bookkeeping.apply(opId, op);
        } catch (RuntimeException e) {
            failure = e;
            LOG.log(System.Logger.Level.ERROR, "GC operation " + opId + " could not be logged; GC is paused until it can be"
                    + " (the next GC request or commit retries; free space if the disk is full)", e);
        }
    }

    /** The failure that stopped GC bookkeeping, or null. */
    RuntimeException failure() {
        return failure;
    }

    /** Refuses to start a change while bookkeeping is paused and cannot resume yet. */
    void requireHealthy() {
        if (failure != null) {
            tryResume();
        }
        RuntimeException f = failure;
        if (f != null) {
            if (StoreException.isNoSpace(f) || f instanceof GcStoreException) {
                throw new StorageFullException("gc", catalog.db().path(), null, "storage full: the GC log cannot be written ("
                        + f.getMessage() + "); free space on the data disk: delete snapshots or volumes, then run reclaim-now"
                        + " (POST /api/v1/gc/reclaim), or grow the disk", f);
            }
            throw new IllegalStateException("GC bookkeeping is paused after a failure (" + f.getMessage() + "); it resumes by"
                    + " itself once the GC log can be written again; if it does not (the GC pipeline itself failed), restart the server", f);
        }
    }

    /** Re-drives the operations the GC log lacks, in order, under the commit monitor; clears the failure if that works. */
    private void tryResume() {
        List<Runnable> resumed;
        synchronized (commitMonitor.get()) {
            if (failure == null) {
                return;
            }
            try {
                redrive.run();
            } catch (RuntimeException e) {
                failure = e;
                return;
            }
            synchronized (this) {
                failure = null;
                resumed = waiting;
                waiting = new java.util.ArrayList<>();
            }
            LOG.log(System.Logger.Level.INFO, "GC bookkeeping resumed: the waiting operations are in the GC log");
        }
        // after the lock: what waited only registers or sends without waiting (a commit calling apply still holds the monitor);
        // one that throws must neither make apply throw (its commit is durable) nor keep the later ones from running
        for (Runnable r : resumed) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "what waited for GC bookkeeping to resume failed (" + e.getMessage() + "); nothing is"
                        + " freed early, but a backup it would have ended on a worker may hold back that worker's sweeps until the master"
                        + " restarts", e);
            }
        }
    }

    /**
     * Runs {@code then} now if no operation waits to be logged, else once bookkeeping resumed (every
     * waiting operation logged, or routed), on the resuming thread; never if the server stops first.
     * A master ends a committed backup's protection on a worker through this: while bookkeeping is
     * paused, the commit's counts may be in no outbox yet, and the protection must outlast their
     * absence (a restart re-drives them before any sweep is asked).
     */
    void whenHealthy(Runnable then) {
        synchronized (this) {
            if (failure != null) {
                waiting.add(then);
                return;
            }
        }
        then.run();
    }

    /**
     * Deletes the operation records up to {@code durable}: the GC log has them, no re-drive needs
     * them. A commit logged in parts keeps its record until its last part is durable.
     */
    void trimUpTo(long durable) {
        List<GcRecords.Op> done = records.opsUpTo(durable).stream().filter(op -> op.lastId() <= durable).toList();
        if (done.isEmpty()) {
            return;
        }
        try (MetadataBatch batch = new MetadataBatch()) {
            for (GcRecords.Op op : done) {
                records.deleteOp(batch, op.id());
            }
            catalog.write(batch);
        }
    }
}
