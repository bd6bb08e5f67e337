package org.holdfast.server.store;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreStats;

/**
 * Sealed data logs in an object store (backend {@code s3}): a log whose content is final (the
 * durable point lies in a later log) is uploaded once, create-only, as an immutable object; its
 * local file then belongs to the {@link LogCache}, and a log whose local file is gone is read by
 * ranges of its object.
 *
 * <p>An upload is confirmed by a synced {@code meta} key ({@link UploadRecords}) holding
 * the log's epoch (its header's creation time) and the node name it was uploaded under: only a
 * confirmed log may lose its local file, and its object key ({@link LogKeys#key}) follows from the catalog
 * alone, even after the node is renamed. The epoch tells a log id that was
 * dropped by crash recovery and created again from the first. A compacted log is uploaded as a new
 * object (a new epoch) and the old one deleted after the switch, through synced delete intents
 * (see {@link Compactor}); without its archive an archived store ({@link #inUse}) is not compacted.
 *
 * <p>This class is the façade: it names the node, owns the uploader thread and the object store, and
 * makes its parts when a data store binds it: {@link UploadRecords} (the confirmed uploads),
 * {@link LogUploads} (uploading and confirming), {@link UploadWait} (waiting for uploads with
 * progress), {@link ArchiveReads} (ranges and whole objects of confirmed logs),
 * {@link DeleteIntents} and {@link ObjectRetirement} (deletion on objects), {@link CompactedUploads}
 * (compaction on objects), {@link ArchiveCounters} (its figures).
 */
public final class LogArchive implements AutoCloseable {
    /** Meta key set once a store archives logs: from then on only a store opened with its archive compacts. */
    static final String META_IN_USE = "store.object.in-use";
    /** Meta key of the random id that names a node configured without a name ({@code node-<id hex>}). */
    static final String META_NODE_ID = "store.object.node-id";
    /** Subdirectory of the data directory that holds the cached ranges of logs whose local file is gone. */
    static final String RANGES_DIR = "ranges";

    private final ObjectStore objects;
    // null until bind when no name was configured: then the catalog's node id names it
    private String node;
    private final ExecutorService uploader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "holdfast-log-upload");
        t.setDaemon(true);
        return t;
    });
    private final ArchiveCounters counters = new ArchiveCounters();
    private MetadataDb db;
    private final LogCache.Settings cacheSettings;
    // made at bind: the data directory holds the cache
    private volatile LogCache cache;
    private volatile DeleteLease lease = DeleteLease.NOT_NEEDED;
    // the parts, made at bind (they need the catalog and the node's name)
    private UploadRecords records;
    private LogUploads uploads;
    private UploadWait waits;
    private ArchiveReads reads;
    private ObjectRetirement retirement;
    private CompactedUploads compaction;

    /**
     * Archives into {@code objects} under {@code node}'s name (one node's logs per key space); a null
     * or blank {@code node} takes {@code node-<random id>}, the id kept in the catalog.
     */
    public LogArchive(ObjectStore objects, String node) {
        this(objects, node, LogCache.Settings.defaults());
    }

    /** As {@link #LogArchive(ObjectStore, String)}, with the local cache of logs and ranges set by {@code cache}. */
    public LogArchive(ObjectStore objects, String node, LogCache.Settings cache) {
        this(objects, node, cache, false);
    }

    /** {@code keySpace}: {@code node} is a worker's key space, which holds '/' (else a node name, which must not). */
    private LogArchive(ObjectStore objects, String node, LogCache.Settings cache, boolean keySpace) {
        if (!keySpace && node != null && node.contains("/")) {
            throw new IllegalArgumentException("the node name for object keys must not contain '/', got '" + node + "'");
        }
        this.cacheSettings = cache;
        this.objects = objects;
        this.node = node == null || node.isBlank() ? null : node;
    }

    /**
     * Archives a worker's range logs under {@code keySpace} ({@link WorkerKeys#space}: the worker's id
     * and takeover epoch, so it holds '/', which a node name may not), with the cache set by {@code cache}.
     */
    public static LogArchive forKeySpace(ObjectStore objects, String keySpace, LogCache.Settings cache) {
        if (keySpace == null || keySpace.isBlank() || keySpace.startsWith("/") || keySpace.endsWith("/")) {
            throw new IllegalArgumentException("a key space for object keys must be a non-empty path without a leading or trailing '/',"
                    + " got '" + keySpace + "'");
        }
        return new LogArchive(objects, keySpace, cache, true);
    }

    /** Whether logs of the store with catalog {@code db} are archived (then nothing may rewrite a sealed log). */
    static boolean inUse(MetadataDb db) {
        return db.metaLong(META_IN_USE, 0) != 0;
    }

    /** Called once by the data store that uses this archive, at open. */
    synchronized void bind(Path dir, MetadataDb db, boolean readOnly) {
        if (this.db != null) {
            throw new IllegalStateException("a log archive serves one data store");
        }
        this.db = db;
        long nodeId = db.metaLong(META_NODE_ID, 0);
        if (!inUse(db) || node == null && nodeId == 0) {
            nodeId = nodeId != 0 ? nodeId : new java.security.SecureRandom().nextLong() | 1;
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, META_IN_USE, 1);
                db.putMetaLong(b, META_NODE_ID, nodeId);
                db.write(b, true);
            }
        }
        if (node == null) {
            node = String.format("node-%016x", nodeId);
        }
        records = new UploadRecords(db, node);
        reads = new ArchiveReads(objects, dir, records, counters);
        DeleteIntents intents = new DeleteIntents(db);
        retirement = new ObjectRetirement(objects, dir, db, records, intents, uploader, counters, () -> lease);
        compaction = new CompactedUploads(objects, node, db, records, intents, retirement, counters, () -> lease);
        if (!readOnly) {
            retirement.resumeRetirements(); // a checker (read-only) deletes nothing, neither files nor objects
        }
        cache = new LogCache(cacheSettings, new RangeFiles(dir.resolve(RANGES_DIR)), new LogCache.Source() {
            @Override
            public byte[] get(int logId, long offset, int length) {
                return reads.getRange(logId, offset, length);
            }

            @Override
            public String name(int logId) {
                String k = records.uploadedKeyOf(logId);
                return k == null ? "data log " + logId + " (not uploaded)" : k;
            }
        }, records::isUploaded);
        uploads = new LogUploads(objects, node, dir, db, records, cache, uploader, counters);
        waits = new UploadWait(dir, records, uploads, uploader, counters);
    }

    /** The local cache of uploaded logs and ranges (made when the data store opens). */
    public LogCache cache() {
        return cache;
    }

    /** The logs below {@code below} are sealed and final: uploads those not yet confirmed, in the background. */
    void sealedBelow(int below) {
        uploads.sealedBelow(below);
    }

    /** Whether log {@code id}'s upload is confirmed (its local file may then go). */
    public boolean isUploaded(int id) {
        return records.isUploaded(id);
    }

    /**
     * Up to {@code length} bytes of confirmed log {@code id}'s object from {@code offset} (fewer at its
     * end): a ranged GET. A log never confirmed, or a confirmed one whose object is gone, is corrupt data.
     */
    byte[] getRange(int id, long offset, int length) {
        return reads.getRange(id, offset, length);
    }

    /** A reader of confirmed log {@code id} through the cache's ranges of its object, or null if it was never confirmed. */
    LogReader remote(int id) {
        String key = records.uploadedKeyOf(id);
        return key == null ? null : new ArchivedLog(id, key, cache);
    }

    /**
     * Waits until every sealed log below {@code below} that has a local file is confirmed in the object
     * store, and returns those that are still not: empty when the bucket holds them all. A log with no
     * local file needs none (compaction deleted it whole, or the cache evicted it after its upload).
     * A failed upload is tried again after 1 s, doubling per failure up to 30 s (a refusing store is
     * not hammered), back to 1 s once a log gets through. It gives up once no log was confirmed for
     * {@code stallMillis}: a slow upload of many logs is waited for as long as it moves.
     * {@code progress} gets a line when a log got through and before each retry, saying what is awaited.
     */
    public List<Integer> awaitUploadedBelow(int below, long stallMillis, Consumer<String> progress) {
        return waits.awaitUploadedBelow(below, stallMillis, progress);
    }

    /** Waits until the uploads scheduled so far have run (tests, orderly stop). */
    public void awaitUploads(long timeoutMillis) {
        try {
            uploader.submit(() -> { }).get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("uploads did not finish within " + timeoutMillis + " ms", e);
        }
    }

    /** Logs uploaded, uploads failed (retried later), logs fetched back, and the object store's request figures. */
    public record Stats(long logsUploaded, long uploadFailures, long logsFetched, ObjectStoreStats requests) {
    }

    public Stats stats() {
        return new Stats(counters.uploaded.get(), counters.uploadFailures.get(), counters.fetched.get(), objects.stats());
    }

    /** A confirmed upload: log id, object key, the log epoch in the key, and its digest (null: none kept, or stale). */
    public record UploadedLog(int id, String key, long logEpoch, SealedDigests.Digest digest) {
    }

    /** Every confirmed upload with its digest, in log id order (the sealed-log report). */
    public List<UploadedLog> uploadedLogs() {
        return records.uploadedLogs();
    }

    /** Ids of the logs whose upload is confirmed, in order (their local files may have been evicted). */
    java.util.SortedSet<Integer> uploadedIds() {
        return records.uploadedIds();
    }

    /** The object key confirmed log {@code id} is stored under; refuses a log not confirmed. */
    String objectKeyOf(int id) {
        return records.objectKeyOf(id);
    }

    /** The size of confirmed log {@code id}'s object (one HEAD): for compaction when its file was evicted. */
    long uploadedSize(int id) {
        return reads.uploadedSize(id);
    }

    /** Downloads confirmed log {@code id}'s object into {@code target} (a compaction's source when the file was evicted). */
    void downloadUploaded(int id, Path target) {
        reads.downloadUploaded(id, target);
    }

    // ---- compaction and deletion on objects (see Compactor) ----

    /** A new epoch for a compacted copy of log {@code id}: later than its current one, so the copy gets a key of its own. */
    long nextEpoch(int id) {
        return compaction.nextEpoch(id);
    }

    /**
     * Compaction step 1b: uploads {@code compacted} (log {@code id} with header epoch {@code epoch})
     * create-only under its own key, after a synced intent to delete that key, so a crash before the
     * switch leaves no orphan object behind.
     */
    void uploadCompacted(int id, Path compacted, long epoch) {
        compaction.uploadCompacted(id, compacted, epoch);
    }

    /**
     * Compaction step 2, in the switch's batch: log {@code id}'s upload record names the compacted
     * copy of epoch {@code epoch}, whose delete intent goes, and the old object gets one instead.
     * Returns what puts that back into an undo batch.
     */
    java.util.function.Consumer<MetadataBatch> switchUpload(MetadataBatch b, int id, long epoch) {
        return compaction.switchUpload(b, id, epoch);
    }

    /** Compaction of log {@code id} to epoch {@code epoch} has switched or given up: its copy's intent may be carried out now. */
    void settled(int id, long epoch) {
        compaction.settled(id, epoch);
    }

    /**
     * Deletes dead log {@code id} (no location names it): a synced intent, the local file (through
     * {@code drop}), the object, then the upload record with the intent. A crash anywhere in between
     * is finished at the next start: the record goes last, so a half-deleted log is never re-uploaded.
     */
    void retireLog(int id, Runnable drop) {
        retirement.retireLog(id, drop);
    }

    /** Carries out every delete intent: DELETE the object, then drop the intent (and a dead log's upload record). */
    void retirePending() {
        retirement.retirePending();
    }

    /**
     * A count that moves whenever {@link #uploadedLogs} may have changed (an upload confirmed, a compaction
     * settled, a log retired); equal counts mean nothing to report (an archiving worker's reports between syncs).
     */
    public long confirmedChanges() {
        return counters.confirmedChanges.get();
    }

    /** Objects deleted (dead logs and copies replaced by compaction) since this archive opened. */
    public long objectsDeleted() {
        return counters.objectsDeleted.get();
    }

    /**
     * From now on an object is deleted only while {@code lease} is held (a worker whose range another
     * node could take over); without it the delete intents stay for a later run with a lease.
     */
    public void leaseDeletes(DeleteLease lease) {
        this.lease = lease;
    }

    /** Delete intents waiting in the catalog (deferred for want of a lease, or an outage). */
    public int deletesPending() {
        return retirement.deletesPending();
    }

    /** Lets a running upload finish (it is confirmed or retried at the next start), then closes the object store. */
    @Override
    public void close() {
        uploader.shutdown();
        try {
            uploader.awaitTermination(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (cache != null) {
            cache.close();
        }
        objects.close();
    }
}
