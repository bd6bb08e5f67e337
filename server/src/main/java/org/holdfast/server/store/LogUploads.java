package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.store.object.ObjectStore;

/**
 * The upload of sealed logs: on the archive's uploader thread, every final log not yet confirmed is
 * PUT create-only, whole, and confirmed by one synced batch (its upload record and digest); its
 * local file then belongs to the cache. A failed upload leaves the file and is tried again at the
 * next sync or start.
 */
final class LogUploads {
    // the archive's log lines keep its logger's name
    private static final System.Logger LOG = System.getLogger(LogArchive.class.getName());

    private final ObjectStore objects;
    private final String node;
    private final Path dir;
    private final MetadataDb db;
    private final UploadRecords records;
    private final LogCache cache;
    private final ExecutorService uploader;
    private final ArchiveCounters counters;
    private final AtomicInteger target = new AtomicInteger();
    // logs below this id are uploaded or absent locally; touched by the uploader thread only
    private int checkedBelow = 1;

    LogUploads(ObjectStore objects, String node, Path dir, MetadataDb db, UploadRecords records, LogCache cache, ExecutorService uploader,
            ArchiveCounters counters) {
        this.objects = objects;
        this.node = node;
        this.dir = dir;
        this.db = db;
        this.records = records;
        this.cache = cache;
        this.uploader = uploader;
        this.counters = counters;
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
                counters.uploadFailures.incrementAndGet();
                // the local file stays; the next sync (or start) tries again
                LOG.log(Level.WARNING, "uploading data log " + id + " failed, will retry: " + e.getMessage());
                target.set(checkedBelow); // so that the next sealedBelow schedules a retry
                return;
            }
            checkedBelow++;
        }
    }

    private void uploadIfNeeded(int id) {
        if (records.isUploaded(id)) {
            return;
        }
        Path file = dir.resolve(DataLog.fileName(id));
        if (!Files.exists(file)) {
            return; // a dead log compaction deleted before the store was archived: nothing to keep
        }
        long epoch = epochOf(file);
        String key = LogKeys.key(node, id, epoch);
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
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)), records.uploadRecord(epoch));
            SealedDigests.put(db, b, id, digest);
            db.write(b, true);
        }
        counters.uploaded.incrementAndGet();
        counters.confirmedChanges.incrementAndGet();
        cache.addLog(id, size(file)); // the local copy is cache from now on
    }

    /** The epoch of log file {@code file}: its header's creation time, the one its object key names. */
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
}
