package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.store.object.ObjectMissingException;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreStats;
import org.holdfast.server.store.object.ObjectStoreUnavailableException;

/**
 * Sealed data logs in an object store (backend {@code s3}): a log whose content is final (the
 * durable point lies in a later log) is uploaded once, create-only, as an immutable object; its
 * local file then belongs to the {@link LogCache}, and a log whose local file is gone is read by
 * ranges of its object.
 *
 * <p>An upload is confirmed by a synced {@code meta} key {@value #META_UPLOADED}{@code <id>} holding
 * the log's epoch (its header's creation time) and the node name it was uploaded under: only a
 * confirmed log may lose its local file, and its object key ({@link #key}) follows from the catalog
 * alone, even after the node is renamed. The epoch tells a log id that was
 * dropped by crash recovery and created again from the first. A compacted log is uploaded as a new
 * object (a new epoch) and the old one deleted after the switch, through synced delete intents
 * (see {@link Compactor}); without its archive an archived store ({@link #inUse}) is not compacted.
 */
public final class LogArchive implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(LogArchive.class.getName());
    /** Meta key prefix of a confirmed upload, followed by the log id in hex; value: the log's epoch. */
    static final String META_UPLOADED = "store.object.log/";
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
    private final AtomicInteger target = new AtomicInteger();
    private final AtomicLong uploaded = new AtomicLong();
    // moves whenever the confirmed logs may have changed (upload, compaction settled, log retired): the sealed-log report's cue
    private final AtomicLong confirmedChanges = new AtomicLong();
    private final AtomicLong uploadFailures = new AtomicLong();
    private final AtomicLong fetched = new AtomicLong();
    // logs below this id are uploaded or absent locally; touched by the uploader thread only
    private int checkedBelow = 1;
    private Path dir;
    private MetadataDb db;
    private final LogCache.Settings cacheSettings;
    // made at bind: the data directory holds the cache
    private volatile LogCache cache;

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

    /** The object key of log {@code id} of epoch {@code epoch} uploaded by node {@code node}. */
    static String key(String node, int id, long epoch) {
        return String.format("%s/logs/%08x-%016x.hfl", node, id, epoch);
    }

    /** {id, epoch} of a log object key {@link #key} made for {@code node}, or null for any other key. */
    static long[] parseKey(String node, String key) {
        String head = node + "/logs/";
        if (!key.startsWith(head) || !key.endsWith(".hfl") || key.length() != head.length() + 8 + 1 + 16 + 4
                || key.charAt(head.length() + 8) != '-') {
            return null;
        }
        try {
            return new long[] {Integer.parseUnsignedInt(key.substring(head.length(), head.length() + 8), 16),
                    Long.parseUnsignedLong(key.substring(head.length() + 9, head.length() + 25), 16)};
        } catch (NumberFormatException e) {
            return null;
        }
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
        this.dir = dir;
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
        if (!readOnly) {
            resumeRetirements(); // a checker (read-only) deletes nothing, neither files nor objects
        }
        cache = new LogCache(cacheSettings, new RangeFiles(dir.resolve(RANGES_DIR)), new LogCache.Source() {
            @Override
            public byte[] get(int logId, long offset, int length) {
                return getRange(logId, offset, length);
            }

            @Override
            public String name(int logId) {
                String k = uploadedKeyOf(logId);
                return k == null ? "data log " + logId + " (not uploaded)" : k;
            }
        }, this::isUploaded);
    }

    /** The local cache of uploaded logs and ranges (made when the data store opens). */
    public LogCache cache() {
        return cache;
    }

    /** The logs below {@code below} are sealed and final: uploads those not yet confirmed, in the background. */
    void sealedBelow(int below) {
        if (target.getAndAccumulate(below, Math::max) < below) {
            uploader.execute(this::uploadPending);
        }
    }

    private void uploadPending() {
        int upTo = target.get();
        while (checkedBelow < upTo) {
            int id = checkedBelow;
            try {
                uploadIfNeeded(id);
            } catch (RuntimeException e) {
                uploadFailures.incrementAndGet();
                // the local file stays; the next sync (or start) tries again
                LOG.log(Level.WARNING, "uploading data log " + id + " failed, will retry: " + e.getMessage());
                target.set(checkedBelow); // so that the next sealedBelow schedules a retry
                return;
            }
            checkedBelow++;
        }
    }

    private void uploadIfNeeded(int id) {
        if (isUploaded(id)) {
            return;
        }
        Path file = dir.resolve(DataLog.fileName(id));
        if (!Files.exists(file)) {
            return; // a dead log compaction deleted before the store was archived: nothing to keep
        }
        long epoch = epochOf(file);
        String key = key(node, id, epoch);
        SealedDigests.Digest digest = SealedDigests.of(file, epoch); // before the upload: the bytes it sends
        if (!objects.putIfAbsent(key, file)) {
            // an earlier upload whose confirmation a crash lost, or another writer: only the same size is taken as ours
            OptionalLong size = objects.size(key);
            long local = size(file);
            if (size.isEmpty() || size.getAsLong() != local) {
                throw new StoreException("log-archive", key, null, "object exists with " + size + " bytes but the sealed log has "
                        + local + "; refusing to take it as this log's copy (is another node writing under the name " + node + "?)", null);
            }
        }
        KillPoints.hit(KillPoints.OBJECTS_UPLOAD_AFTER_PUT);
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)), uploadRecord(epoch));
            SealedDigests.put(db, b, id, digest);
            db.write(b, true);
        }
        uploaded.incrementAndGet();
        confirmedChanges.incrementAndGet();
        cache.addLog(id, size(file)); // the local copy is cache from now on
    }

    /** Whether log {@code id}'s upload is confirmed (its local file may then go). */
    public boolean isUploaded(int id) {
        return uploadedKeyOf(id) != null;
    }

    /** The object key a confirmed upload of log {@code id} went to, or null. */
    private String uploadedKeyOf(int id) {
        byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)));
        if (v == null) {
            return null;
        }
        if (v.length <= 8) {
            throw new CorruptDataException("log-archive", db.path(), uploadedKey(id), "upload record has " + v.length + " bytes");
        }
        return key(new String(v, 8, v.length - 8, StandardCharsets.UTF_8), id, Bytes.getLong(v, 0));
    }

    /**
     * Up to {@code length} bytes of confirmed log {@code id}'s object from {@code offset} (fewer at its
     * end): a ranged GET. A log never confirmed, or a confirmed one whose object is gone, is corrupt data.
     */
    byte[] getRange(int id, long offset, int length) {
        String key = uploadedKeyOf(id);
        if (key == null) {
            throw new DataLogMissingException("log-archive", dir.resolve(DataLog.fileName(id)).toString(), id,
                    "data log " + id + " is missing locally and was never confirmed uploaded");
        }
        try {
            return objects.getRange(key, offset, length);
        } catch (ObjectMissingException e) {
            checkBucketHoldsOtherLogs(id, key, e);
            throw new DataLogMissingException("log-archive", key, id,
                    "data log " + id + " is missing locally and its object " + key + " is gone from the object store");
        }
    }

    /** How many other confirmed logs {@link #checkBucketHoldsOtherLogs} looks for (one HEAD each). */
    static final int WITNESS_LOGS = 3;

    /**
     * Before log {@code id}'s object counts as gone (which marks every block of the log bad): do the
     * newest other confirmed logs' objects answer? If none of up to {@link #WITNESS_LOGS} does, the
     * bucket, prefix or endpoint is not this node's any more (a setting changed, another bucket of the
     * same name): an outage of the configuration, not a lost log, and nothing is marked. With no other
     * confirmed log there is nothing to compare with, and the log counts as gone.
     */
    private void checkBucketHoldsOtherLogs(int id, String key, ObjectMissingException cause) {
        int asked = 0;
        List<Integer> ids = new ArrayList<>(uploadedIds());
        for (int i = ids.size() - 1; i >= 0; i--) {
            int other = ids.get(i);
            if (other == id) {
                continue;
            }
            if (objects.size(objectKeyOf(other)).isPresent()) {
                return;
            }
            if (++asked == WITNESS_LOGS) {
                break;
            }
        }
        if (asked > 0) {
            throw new ObjectStoreUnavailableException(ObjectStoreUnavailableException.Reason.REJECTED, "the object store answers that"
                    + " data log " + id + "'s object " + key + " does not exist, and neither do the objects of the " + asked + " newest"
                    + " other confirmed logs: holdfast.store.s3.bucket, prefix or endpoint most likely no longer names this node's"
                    + " bucket; nothing was marked bad; check those settings against where the logs were uploaded and restart", cause);
        }
    }

    /** A reader of confirmed log {@code id} through the cache's ranges of its object, or null if it was never confirmed. */
    LogReader remote(int id) {
        String key = uploadedKeyOf(id);
        return key == null ? null : new ArchivedLog(id, key, cache);
    }

    /** First wait before a failed upload is tried again by {@link #awaitUploadedBelow}; doubled per failure, up to {@link #RETRY_MAX_MILLIS}. */
    static final long RETRY_FIRST_MILLIS = 1_000;
    /** Longest wait between two tries of a failing upload in {@link #awaitUploadedBelow}. */
    static final long RETRY_MAX_MILLIS = 30_000;
    private static final long POLL_MILLIS = 1_000;

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
        List<Integer> missing = notUploadedBelow(below);
        if (missing.isEmpty()) {
            return missing;
        }
        progress.accept("waiting for data logs " + missing + " to reach the object store (giving up after "
                + seconds(stallMillis) + " s without one getting through)");
        long lastProgress = System.nanoTime();
        long retryMillis = RETRY_FIRST_MILLIS;
        long failuresSeen = uploadFailures.get();
        while (!missing.isEmpty()) {
            long left = stallMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastProgress);
            if (left <= 0) {
                break;
            }
            sealedBelow(below); // schedules the uploads again after a failed one; nothing while they run
            try {
                uploader.submit(() -> { }).get(Math.min(left, POLL_MILLIS), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // still uploading: look again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (ExecutionException e) {
                break; // the uploader is closed
            }
            List<Integer> now = notUploadedBelow(below);
            if (now.size() < missing.size()) {
                lastProgress = System.nanoTime();
                retryMillis = RETRY_FIRST_MILLIS;
                if (!now.isEmpty()) {
                    progress.accept("waiting for data logs " + now + " to reach the object store (" + (missing.size() - now.size())
                            + " more got through)");
                }
            }
            missing = now;
            long failures = uploadFailures.get();
            if (missing.isEmpty() || failures == failuresSeen) {
                continue;
            }
            failuresSeen = failures;
            left = stallMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastProgress);
            if (left <= 0) {
                break;
            }
            long wait = Math.min(retryMillis, left);
            progress.accept("uploading data logs " + missing + " failed (" + failures + " failed uploads so far: see the server log);"
                    + " retry in " + seconds(wait) + " s, giving up after " + seconds(left) + " s more without one getting through");
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            retryMillis = Math.min(retryMillis * 2, RETRY_MAX_MILLIS);
        }
        return missing;
    }

    private static long seconds(long millis) {
        return (millis + 999) / 1000;
    }

    private List<Integer> notUploadedBelow(int below) {
        List<Integer> out = new ArrayList<>();
        for (int id = 0; id < below; id++) {
            if (!isUploaded(id) && Files.exists(dir.resolve(DataLog.fileName(id)))) {
                out.add(id);
            }
        }
        return out;
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
        return new Stats(uploaded.get(), uploadFailures.get(), fetched.get(), objects.stats());
    }

    static String uploadedKey(int id) {
        return META_UPLOADED + String.format("%08x", id);
    }

    static long epochOf(Path file) {
        byte[] h = new byte[DATA_LOG_HEADER_BYTES];
        try (InputStream in = Files.newInputStream(file)) {
            if (in.readNBytes(h, 0, h.length) != h.length) {
                throw new CorruptDataException("log-archive", file.toString(), null, "shorter than its header");
            }
        } catch (IOException e) {
            throw StoreException.translate("log-archive", file.toString(), null, e);
        }
        return Bytes.getLong(h, 12);
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw StoreException.translate("log-archive", file.toString(), null, e);
        }
    }

    // ---- compaction and deletion on objects (see Compactor) ----

    /** Meta key prefix of an object to delete, followed by its object key; value: the log id (4 bytes) and {@link #WHOLE_LOG} or 0. */
    static final String META_RETIRE = "store.object.retire/";
    /** Retire-intent flag: the whole log is dead (local file, object, then upload record go); else only a superseded object. */
    private static final byte WHOLE_LOG = 1;
    private final AtomicLong objectsDeleted = new AtomicLong();
    // a compacted copy's digest, from its upload to its switch (by object key)
    private final java.util.Map<String, SealedDigests.Digest> compactedDigests = new java.util.concurrent.ConcurrentHashMap<>();
    // one deleter at a time (a compaction, or the start's resumption)
    private final Object retireLock = new Object();
    // object keys whose intent is written but must not be carried out yet
    private final java.util.Set<String> inFlight = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile DeleteLease lease = DeleteLease.NOT_NEEDED;
    // set while deletes wait for a lease: the wait is logged once, and its end
    private final java.util.concurrent.atomic.AtomicBoolean deferring = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * From now on an object is deleted only while {@code lease} is held (a worker whose range another
     * node could take over); without it the delete intents stay for a later run with a lease.
     */
    public void leaseDeletes(DeleteLease lease) {
        this.lease = lease;
    }

    /** Delete intents waiting in the catalog (deferred for want of a lease, or an outage). */
    public int deletesPending() {
        return intents().size();
    }

    /** Ids of the logs whose upload is confirmed, in order (their local files may have been evicted). */
    java.util.SortedSet<Integer> uploadedIds() {
        java.util.SortedSet<Integer> ids = new java.util.TreeSet<>();
        byte[] prefix = MetadataDb.bytes(META_UPLOADED);
        try (CheckedIterator it = db.iterator(MetadataDb.Column.META)) {
            for (it.seek(prefix); it.isValid() && Bytes.startsWith(it.key(), prefix); it.next()) {
                ids.add(Integer.parseUnsignedInt(new String(it.key(), prefix.length, it.key().length - prefix.length,
                        StandardCharsets.US_ASCII), 16));
            }
        }
        return ids;
    }

    /** A confirmed upload: log id, object key, the log epoch in the key, and its digest (null: none kept, or stale). */
    public record UploadedLog(int id, String key, long logEpoch, SealedDigests.Digest digest) {
    }

    /** Every confirmed upload with its digest, in log id order (the sealed-log report). */
    public List<UploadedLog> uploadedLogs() {
        List<UploadedLog> out = new ArrayList<>();
        for (int id : uploadedIds()) {
            byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)));
            if (v == null || v.length <= 8) {
                continue; // deleted since the listing (or corrupt: its reads say so)
            }
            long epoch = Bytes.getLong(v, 0);
            out.add(new UploadedLog(id, key(new String(v, 8, v.length - 8, StandardCharsets.UTF_8), id, epoch), epoch,
                    SealedDigests.get(db, id, epoch)));
        }
        return out;
    }

    /** The size of confirmed log {@code id}'s object (one HEAD): for compaction when its file was evicted. */
    long uploadedSize(int id) {
        String key = objectKeyOf(id);
        OptionalLong size = objects.size(key);
        if (size.isEmpty()) {
            throw new CorruptDataException("log-archive", key, null, "data log " + id + " is confirmed uploaded but its object is gone");
        }
        return size.getAsLong();
    }

    /** Downloads confirmed log {@code id}'s object into {@code target} (a compaction's source when the file was evicted). */
    void downloadUploaded(int id, Path target) {
        String key = objectKeyOf(id);
        try {
            objects.download(key, target);
        } catch (ObjectMissingException e) {
            throw new CorruptDataException("log-archive", key, null, "data log " + id + " is confirmed uploaded but its object is gone");
        }
        fetched.incrementAndGet();
    }

    /** A new epoch for a compacted copy of log {@code id}: later than its current one, so the copy gets a key of its own. */
    long nextEpoch(int id) {
        byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)));
        return Math.max(System.currentTimeMillis(), Bytes.getLong(v, 0) + 1);
    }

    /**
     * Compaction step 1b: uploads {@code compacted} (log {@code id} with header epoch {@code epoch})
     * create-only under its own key, after a synced intent to delete that key, so a crash before the
     * switch leaves no orphan object behind.
     */
    void uploadCompacted(int id, Path compacted, long epoch) {
        String key = key(node, id, epoch);
        compactedDigests.put(key, SealedDigests.of(compacted, epoch)); // the switch records it
        inFlight.add(key); // until the switch has turned its intent onto the old object (see settled)
        putIntent(key, id, (byte) 0);
        if (!objects.putIfAbsent(key, compacted)) {
            // a copy of an earlier attempt whose intent was not yet carried out: nothing here names it, but a takeover may have adopted it
            if (lease.safeNanos() <= 0) {
                throw new StoreException("log-archive", key, null, "an earlier compaction's copy of data log " + id + " is in the bucket"
                        + " and this node holds no delete lease (see the deferred-delete warning): compaction of the log waits for the"
                        + " next run", null);
            }
            objects.delete(key);
            objectsDeleted.incrementAndGet();
            if (!objects.putIfAbsent(key, compacted)) {
                throw new StoreException("log-archive", key, null, "object exists after its deletion; is another node writing as "
                        + node + "?", null);
            }
        }
        KillPoints.hit(KillPoints.OBJECT_COMPACTION_AFTER_UPLOAD);
    }

    /**
     * Compaction step 2, in the switch's batch: log {@code id}'s upload record names the compacted
     * copy of epoch {@code epoch}, whose delete intent goes, and the old object gets one instead.
     * Returns what puts that back into an undo batch.
     */
    java.util.function.Consumer<MetadataBatch> switchUpload(MetadataBatch b, int id, long epoch) {
        String old = objectKeyOf(id);
        byte[] oldRecord = db.get(MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)));
        String key = key(node, id, epoch);
        byte[] oldDigest = db.get(MetadataDb.Column.META, SealedDigests.key(id));
        db.put(b, MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)), uploadRecord(epoch));
        SealedDigests.Digest digest = compactedDigests.remove(key);
        if (digest != null) { // else the old digest is stale (another log epoch) and the log counts as unhashed
            SealedDigests.put(db, b, id, digest);
        }
        db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key));
        db.put(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + old), intentValue(id, (byte) 0));
        return undo -> { // the switch is taken back (its rename failed): the old object stays, the copy goes
            db.put(undo, MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)), oldRecord);
            if (oldDigest != null) {
                db.put(undo, MetadataDb.Column.META, SealedDigests.key(id), oldDigest);
            }
            db.delete(undo, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + old));
            db.put(undo, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key), intentValue(id, (byte) 0));
        };
    }

    /**
     * Deletes dead log {@code id} (no location names it): a synced intent, the local file (through
     * {@code drop}), the object, then the upload record with the intent. A crash anywhere in between
     * is finished at the next start: the record goes last, so a half-deleted log is never re-uploaded.
     */
    void retireLog(int id, Runnable drop) {
        String key = objectKeyOf(id);
        inFlight.add(key); // the record may go only once the file is gone
        try {
            putIntent(key, id, WHOLE_LOG);
            drop.run();
        } finally {
            inFlight.remove(key);
        }
        retirePending();
        confirmedChanges.incrementAndGet();
    }

    /** Compaction of log {@code id} to epoch {@code epoch} has switched or given up: its copy's intent may be carried out now. */
    void settled(int id, long epoch) {
        inFlight.remove(key(node, id, epoch));
        compactedDigests.remove(key(node, id, epoch));
        confirmedChanges.incrementAndGet();
    }

    /**
     * A count that moves whenever {@link #uploadedLogs} may have changed (an upload confirmed, a compaction
     * settled, a log retired); equal counts mean nothing to report (an archiving worker's reports between syncs).
     */
    public long confirmedChanges() {
        return confirmedChanges.get();
    }

    /** Carries out every delete intent: DELETE the object, then drop the intent (and a dead log's upload record). */
    void retirePending() {
        synchronized (retireLock) {
            retirePendingLocked();
        }
    }

    private void retirePendingLocked() {
        for (java.util.Map.Entry<String, byte[]> e : intents().entrySet()) {
            String key = e.getKey();
            int id = Bytes.getInt(e.getValue(), 0);
            if (inFlight.contains(key)) {
                continue; // a compaction's copy before its switch, or a dead log whose file is still being deleted
            }
            if (e.getValue()[4] != WHOLE_LOG && key.equals(uploadedKeyOf(id))) {
                // never delete the object the catalog names for a live log: drop the intent, keep the object
                LOG.log(Level.WARNING, "not deleting object {0}: it is data log {1}'s current copy; dropping the intent", key, id);
                try (MetadataBatch b = new MetadataBatch()) {
                    db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key));
                    db.write(b, true);
                }
                continue;
            }
            long asked = System.nanoTime();
            long safe = lease.safeNanos();
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
            objectsDeleted.incrementAndGet();
            KillPoints.hit(KillPoints.OBJECT_RETIRE_AFTER_DELETE);
            try (MetadataBatch b = new MetadataBatch()) {
                if (e.getValue()[4] == WHOLE_LOG && key.equals(uploadedKeyOf(id))) {
                    db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)));
                    SealedDigests.delete(db, b, id);
                }
                db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key));
                db.write(b, true);
            }
            LOG.log(Level.INFO, "deleted object {0} (data log {1}) from the object store", key, id);
        }
    }

    /** Objects deleted (dead logs and copies replaced by compaction) since this archive opened. */
    public long objectsDeleted() {
        return objectsDeleted.get();
    }

    /**
     * At open, before the data store recovers: a dead log whose deletion a crash interrupted loses
     * its local file now (its record stays until the object is gone); the DELETEs run in the
     * background, so a start does not wait for the object store.
     */
    private void resumeRetirements() {
        java.util.Map<String, byte[]> intents = intents();
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

    /** The delete intents in the catalog, by object key (checked). */
    private java.util.Map<String, byte[]> intents() {
        byte[] prefix = MetadataDb.bytes(META_RETIRE);
        java.util.Map<String, byte[]> intents = new java.util.TreeMap<>();
        try (CheckedIterator it = db.iterator(MetadataDb.Column.META)) {
            for (it.seek(prefix); it.isValid() && Bytes.startsWith(it.key(), prefix); it.next()) {
                intents.put(new String(it.key(), prefix.length, it.key().length - prefix.length, StandardCharsets.UTF_8),
                        checkedIntent(it.key(), it.value()));
            }
        }
        return intents;
    }

    private void putIntent(String key, int id, byte kind) {
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key), intentValue(id, kind));
            db.write(b, true);
        }
    }

    private byte[] checkedIntent(byte[] key, byte[] v) {
        if (v.length != 5 || v[4] != 0 && v[4] != WHOLE_LOG) {
            throw new CorruptDataException("log-archive", db.path(), new String(key, StandardCharsets.UTF_8),
                    "delete intent has " + v.length + " bytes (5 expected) or an unknown kind");
        }
        return v;
    }

    private static byte[] intentValue(int id, byte kind) {
        byte[] v = new byte[5];
        Bytes.putInt(v, 0, id);
        v[4] = kind;
        return v;
    }

    private byte[] uploadRecord(long epoch) {
        return uploadRecord(epoch, node);
    }

    /** The value of a confirmed upload: u64 epoch, then the node name (UTF-8). */
    static byte[] uploadRecord(long epoch, String node) {
        byte[] name = node.getBytes(StandardCharsets.UTF_8);
        byte[] v = new byte[8 + name.length];
        Bytes.putLong(v, 0, epoch);
        System.arraycopy(name, 0, v, 8, name.length);
        return v;
    }

    /** The object key confirmed log {@code id} is stored under; refuses a log not confirmed. */
    String objectKeyOf(int id) {
        String key = uploadedKeyOf(id);
        if (key == null) {
            throw new IllegalStateException("data log " + id + " is not confirmed uploaded");
        }
        return key;
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
