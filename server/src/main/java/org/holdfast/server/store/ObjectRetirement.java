package org.holdfast.server.store;

import static org.holdfast.server.store.DeleteIntents.META_RETIRE;
import static org.holdfast.server.store.DeleteIntents.WHOLE_LOG;

import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreUnavailableException;

/**
 * Deletion on objects: carries out the delete intents ({@link DeleteIntents}) one deleter at a time,
 * only while the delete lease is held: the DELETE, then the intent goes (with a dead log's upload
 * record). A dead log is retired through an intent, its local file, its object, then its record; an
 * intent the caller still needs ({@link #hold}) waits.
 */
final class ObjectRetirement {
    // the archive's log lines keep its logger's name
    private static final System.Logger LOG = System.getLogger(LogArchive.class.getName());

    private final ObjectStore objects;
    private final Path dir;
    private final MetadataDb db;
    private final UploadRecords records;
    private final DeleteIntents intents;
    private final ExecutorService uploader;
    private final ArchiveCounters counters;
    // the archive's current lease (set before or after the store opens)
    private final Supplier<DeleteLease> lease;
    // one deleter at a time (a compaction, or the start's resumption)
    private final Object retireLock = new Object();
    // object keys whose intent is written but must not be carried out yet
    private final java.util.Set<String> inFlight = java.util.concurrent.ConcurrentHashMap.newKeySet();
    // set while deletes wait for a lease: the wait is logged once, and its end
    private final java.util.concurrent.atomic.AtomicBoolean deferring = new java.util.concurrent.atomic.AtomicBoolean();

    ObjectRetirement(ObjectStore objects, Path dir, MetadataDb db, UploadRecords records, DeleteIntents intents, ExecutorService uploader,
            ArchiveCounters counters, Supplier<DeleteLease> lease) {
        this.objects = objects;
        this.dir = dir;
        this.db = db;
        this.records = records;
        this.intents = intents;
        this.uploader = uploader;
        this.counters = counters;
        this.lease = lease;
    }

    /** Keeps the intent for object {@code key} from being carried out until {@link #release}. */
    void hold(String key) {
        inFlight.add(key);
    }

    /** Lets the intent for object {@code key} be carried out again. */
    void release(String key) {
        inFlight.remove(key);
    }

    /** See {@link LogArchive#retireLog}. */
    void retireLog(int id, Runnable drop) {
        String key = records.objectKeyOf(id);
        inFlight.add(key); // the record may go only once the file is gone
        try {
            intents.putIntent(key, id, WHOLE_LOG);
            drop.run();
        } finally {
            inFlight.remove(key);
        }
        retirePending();
        counters.confirmedChanges.incrementAndGet();
    }

    /** Carries out every delete intent: DELETE the object, then drop the intent (and a dead log's upload record). */
    void retirePending() {
        synchronized (retireLock) {
            retirePendingLocked();
        }
    }

    private void retirePendingLocked() {
        for (java.util.Map.Entry<String, byte[]> e : intents.intents().entrySet()) {
            String key = e.getKey();
            int id = Bytes.getInt(e.getValue(), 0);
            if (inFlight.contains(key)) {
                continue; // a compaction's copy before its switch, or a dead log whose file is still being deleted
            }
            if (e.getValue()[4] != WHOLE_LOG && key.equals(records.uploadedKeyOf(id))) {
                // never delete the object the catalog names for a live log: drop the intent, keep the object
                LOG.log(Level.WARNING, "not deleting object {0}: it is data log {1}'s current copy; dropping the intent", key, id);
                try (MetadataBatch b = new MetadataBatch()) {
                    db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key));
                    db.write(b, true);
                }
                continue;
            }
            long asked = System.nanoTime();
            long safe = lease.get().safeNanos();
            if (safe <= 0) {
                // maybe another node took the range over and adopted this object: the intent stays for a run with a lease
                if (deferring.compareAndSet(false, true)) {
                    LOG.log(Level.WARNING, "deferring the delete of object " + key + " and any other: this node holds no delete lease"
                            + " (the master has not acknowledged it within half of holdfast.cluster.lost-after, or the bucket shows a"
                            + " takeover of its range), so another node may own the object now; the next compaction run or start"
                            + " with a working master link deletes them");
                }
                return;
            }
            if (deferring.compareAndSet(true, false)) {
                LOG.log(Level.INFO, "the master hears this node again: deferred object deletes go ahead");
            }
            KillPoints.hit(KillPoints.OBJECT_RETIRE_BEFORE_DELETE);
            try {
                objects.delete(key); // a DELETE of a missing key succeeds: a repeat after a crash is harmless
            } catch (ObjectStoreUnavailableException ex) {
                // the intent stays; the next compaction or start tries again
                LOG.log(Level.WARNING, "deleting object " + key + " failed, will retry: " + ex.getMessage());
                return;
            }
            if (System.nanoTime() - asked > safe) {
                // the request could have reached the bucket after a takeover listed it: say so, there is nothing to undo
                LOG.log(Level.WARNING, "deleting object " + key + " took longer than the delete lease allowed: its request may have"
                        + " reached the bucket after another node took this worker's range over");
            }
            counters.objectsDeleted.incrementAndGet();
            KillPoints.hit(KillPoints.OBJECT_RETIRE_AFTER_DELETE);
            try (MetadataBatch b = new MetadataBatch()) {
                if (e.getValue()[4] == WHOLE_LOG && key.equals(records.uploadedKeyOf(id))) {
                    db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)));
                    SealedDigests.delete(db, b, id);
                }
                db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key));
                db.write(b, true);
            }
            LOG.log(Level.INFO, "deleted object {0} (data log {1}) from the object store", key, id);
        }
    }

    /** Delete intents waiting in the catalog (deferred for want of a lease, or an outage). */
    int deletesPending() {
        return intents.intents().size();
    }

    /**
     * At open, before the data store recovers: a dead log whose deletion a crash interrupted loses
     * its local file now (its record stays until the object is gone); the DELETEs run in the
     * background, so a start does not wait for the object store.
     */
    void resumeRetirements() {
        java.util.Map<String, byte[]> intents = this.intents.intents();
        for (byte[] v : intents.values()) {
            if (v[4] == WHOLE_LOG) {
                DataLog.deleteFile(dir.resolve(DataLog.fileName(Bytes.getInt(v, 0))));
            }
        }
        if (!intents.isEmpty()) {
            DataLog.forceDirectory(dir);
            uploader.execute(() -> {
                try {
                    retirePending();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "finishing interrupted object deletions failed, will retry at the next compaction: "
                            + e.getMessage());
                }
            });
        }
    }
}
