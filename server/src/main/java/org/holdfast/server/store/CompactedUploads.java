package org.holdfast.server.store;

import static org.holdfast.server.store.DeleteIntents.META_RETIRE;

import java.nio.file.Path;
import java.util.function.Supplier;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.store.object.ObjectStore;

/**
 * Compaction on objects (see {@link Compactor}): a compacted log keeps its id and gets a new epoch,
 * so its copy is uploaded create-only under a key of its own behind a synced delete intent, and the
 * switch batch turns that intent onto the old object; until the switch settles, the copy's intent is
 * held back from the deleter.
 */
final class CompactedUploads {
    private final ObjectStore objects;
    private final String node;
    private final MetadataDb db;
    private final UploadRecords records;
    private final DeleteIntents intents;
    private final ObjectRetirement retirement;
    private final ArchiveCounters counters;
    // the archive's current lease (set before or after the store opens)
    private final Supplier<DeleteLease> lease;
    // a compacted copy's digest, from its upload to its switch (by object key)
    private final java.util.Map<String, SealedDigests.Digest> compactedDigests = new java.util.concurrent.ConcurrentHashMap<>();

    CompactedUploads(ObjectStore objects, String node, MetadataDb db, UploadRecords records, DeleteIntents intents,
            ObjectRetirement retirement, ArchiveCounters counters, Supplier<DeleteLease> lease) {
        this.objects = objects;
        this.node = node;
        this.db = db;
        this.records = records;
        this.intents = intents;
        this.retirement = retirement;
        this.counters = counters;
        this.lease = lease;
    }

    /** A new epoch for a compacted copy of log {@code id}: later than its current one, so the copy gets a key of its own. */
    long nextEpoch(int id) {
        byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)));
        return Math.max(System.currentTimeMillis(), Bytes.getLong(v, 0) + 1);
    }

    /** See {@link LogArchive#uploadCompacted}. */
    void uploadCompacted(int id, Path compacted, long epoch) {
        String key = LogKeys.key(node, id, epoch);
        compactedDigests.put(key, SealedDigests.of(compacted, epoch)); // the switch records it
        retirement.hold(key); // until the switch has turned its intent onto the old object (see settled)
        intents.putIntent(key, id, (byte) 0);
        if (!objects.putIfAbsent(key, compacted)) {
            // a copy of an earlier attempt whose intent was not yet carried out: nothing here names it, but a takeover may have adopted it
            if (lease.get().safeNanos() <= 0) {
                throw new StoreException("log-archive", key, null, "an earlier compaction's copy of data log " + id + " is in the bucket"
                        + " and this node holds no delete lease (see the deferred-delete warning): compaction of the log waits for the"
                        + " next run", null);
            }
            objects.delete(key);
            counters.objectsDeleted.incrementAndGet();
            if (!objects.putIfAbsent(key, compacted)) {
                throw new StoreException("log-archive", key, null, "object exists after its deletion; is another node writing as "
                        + node + "?", null);
            }
        }
        KillPoints.hit(KillPoints.OBJECT_COMPACTION_AFTER_UPLOAD);
    }

    /** See {@link LogArchive#switchUpload}. */
    java.util.function.Consumer<MetadataBatch> switchUpload(MetadataBatch b, int id, long epoch) {
        String old = records.objectKeyOf(id);
        byte[] oldRecord = db.get(MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)));
        String key = LogKeys.key(node, id, epoch);
        byte[] oldDigest = db.get(MetadataDb.Column.META, SealedDigests.key(id));
        db.put(b, MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)), records.uploadRecord(epoch));
        SealedDigests.Digest digest = compactedDigests.remove(key);
        if (digest != null) { // else the old digest is stale (another log epoch) and the log counts as unhashed
            SealedDigests.put(db, b, id, digest);
        }
        db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key));
        db.put(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + old), DeleteIntents.intentValue(id, (byte) 0));
        return undo -> { // the switch is taken back (its rename failed): the old object stays, the copy goes
            db.put(undo, MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)), oldRecord);
            if (oldDigest != null) {
                db.put(undo, MetadataDb.Column.META, SealedDigests.key(id), oldDigest);
            }
            db.delete(undo, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + old));
            db.put(undo, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key), DeleteIntents.intentValue(id, (byte) 0));
        };
    }

    /** Compaction of log {@code id} to epoch {@code epoch} has switched or given up: its copy's intent may be carried out now. */
    void settled(int id, long epoch) {
        retirement.release(LogKeys.key(node, id, epoch));
        compactedDigests.remove(LogKeys.key(node, id, epoch));
        counters.confirmedChanges.incrementAndGet();
    }
}
