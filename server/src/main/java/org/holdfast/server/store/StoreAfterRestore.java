package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.TreeSet;
import org.holdfast.server.store.object.ObjectStore;

/**
 * Makes a data store safe to continue on a catalog restored from an older backup (the offline
 * {@code catalog-restore}). The data logs (local, and with backend s3 in the bucket) may hold
 * records written after the backup, which the restored catalog knows nothing about:
 *
 * <ul>
 * <li>log ids: the store continues in a new, empty log past every id found locally and in the
 *     bucket (a reused id would meet an object already in the bucket, written create-only), so
 *     the durable point moves there; the backup's active log becomes final like any sealed log;</li>
 * <li>PBNs: {@code store.pbn-reserved} goes past the highest PBN recorded in any log the backup may
 *     not know (those from the backup's durable log on, read by their record headers), so a PBN of a
 *     lost snapshot is never handed out again;</li>
 * <li>backend s3: a log uploaded after the backup is confirmed from the bucket listing (the restored
 *     catalog has no upload record for it, and its local file may be gone with the disk);</li>
 * <li>logs the restored locations name but that exist neither locally nor in the bucket (compaction
 *     moved their records after the backup) are reported: their blocks cannot be read.</li>
 * </ul>
 *
 * Listing the local logs is {@link DataStore#logFiles}, the same code recovery uses at open.
 */
public final class StoreAfterRestore {
    private static final String STORE = "catalog-restore";

    /**
     * What was done: the backup's durable point, the new active log, the PBN high-water mark before
     * and after, logs scanned for PBNs, logs confirmed from the bucket, and logs named by locations
     * that are gone.
     */
    public record Report(int backupLogId, long backupLogLength, int newLogId, long pbnReservedBefore, long pbnReservedAfter,
                         int logsScanned, int logsAdopted, List<Integer> missingLogs) {
    }

    private StoreAfterRestore() {
    }

    /**
     * Prepares the store in {@code logDir} over {@code db}. {@code objects} null: backend local;
     * else the bucket of node {@code node} (null or blank: the catalog's node id), and logs needed for
     * the PBN scan that are only in the bucket are downloaded to {@code scratch} and deleted after.
     */
    public static Report run(Path logDir, MetadataDb db, ObjectStore objects, String node, Path scratch) {
        byte[] dp = db.get(MetadataDb.Column.META, MetadataDb.bytes(FormatVersions.META_DURABLE_POINT));
        if (dp == null || dp.length != 12) {
            throw new CorruptDataException(STORE, db.path(), FormatVersions.META_DURABLE_POINT,
                    "the restored catalog has no durable point; it is not a catalog of a server that stored data");
        }
        int backupLog = Bytes.getInt(dp, 0);
        long backupLength = Bytes.getLong(dp, 4);
        TreeMap<Integer, Path> local = DataStore.logFiles(logDir);
        String nodeName = objects == null ? null : nodeName(db, node);
        TreeMap<Integer, TreeSet<Long>> archived = new TreeMap<>();
        if (objects != null) {
            for (String key : objects.list(nodeName + "/logs/")) {
                long[] ide = LogArchive.parseKey(nodeName, key);
                if (ide != null) {
                    archived.computeIfAbsent((int) ide[0], k -> new TreeSet<>()).add(ide[1]);
                }
            }
        }
        int maxLog = backupLog;
        if (!local.isEmpty()) {
            maxLog = Math.max(maxLog, local.lastKey());
        }
        if (!archived.isEmpty()) {
            maxLog = Math.max(maxLog, archived.lastKey());
        }

        long reservedBefore = db.metaLong(FormatVersions.META_PBN_RESERVED, 1);
        long highest = Math.max(reservedBefore - 1, new LocationIndex(db).maxPbn());
        int scanned = 0;
        TreeSet<Integer> candidates = new TreeSet<>(local.tailMap(backupLog, true).keySet());
        candidates.addAll(archived.tailMap(backupLog, true).keySet());
        for (int id : candidates) {
            Path file = local.get(id);
            if (file != null) {
                highest = Math.max(highest, LogHighWater.maxPbn(file));
                scanned++;
            }
            TreeSet<Long> epochs = archived.get(id);
            if (epochs != null) {
                String key = LogArchive.key(nodeName, id, epochs.first());
                OptionalLong size = objects.size(key);
                if (file == null || size.isPresent() && size.getAsLong() > size(file)) {
                    highest = Math.max(highest, scanObject(objects, key, scratch));
                    scanned++;
                }
            }
        }
        long reservedAfter = highest + 1;

        int adopted = 0;
        int newLog = maxLog + 1;
        try {
            Files.createDirectories(logDir);
        } catch (IOException e) {
            throw StoreException.translate(STORE, logDir.toString(), null, e);
        }
        // the new log first: a durable point must never name a missing log
        DataLog.create(logDir, newLog, System.currentTimeMillis()).close();
        try (MetadataBatch b = new MetadataBatch()) {
            for (Map.Entry<Integer, TreeSet<Long>> e : archived.entrySet()) {
                if (db.get(MetadataDb.Column.META, MetadataDb.bytes(LogArchive.uploadedKey(e.getKey()))) == null) {
                    // the oldest copy: the one written before any compaction the restored locations do not know
                    db.put(b, MetadataDb.Column.META, MetadataDb.bytes(LogArchive.uploadedKey(e.getKey())),
                            LogArchive.uploadRecord(e.getValue().first(), nodeName));
                    adopted++;
                }
            }
            byte[] point = new byte[12];
            Bytes.putInt(point, 0, newLog);
            Bytes.putLong(point, 4, DATA_LOG_HEADER_BYTES);
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes(FormatVersions.META_DURABLE_POINT), point);
            db.putMetaLong(b, FormatVersions.META_PBN_RESERVED, Math.max(reservedBefore, reservedAfter));
            db.write(b, true);
        }
        return new Report(backupLog, backupLength, newLog, reservedBefore, Math.max(reservedBefore, reservedAfter), scanned, adopted,
                missingLogs(db, local, archived, nodeName));
    }

    private static String nodeName(MetadataDb db, String node) {
        if (node != null && !node.isBlank()) {
            return node;
        }
        long id = db.metaLong(LogArchive.META_NODE_ID, 0);
        if (id == 0) {
            throw new StoreException(STORE, db.path(), LogArchive.META_NODE_ID, "the restored catalog names no object-store node"
                    + " (its server never archived a log); give the node name the server used: --holdfast.store.s3.node=NAME", null);
        }
        return String.format("node-%016x", id);
    }

    private static long scanObject(ObjectStore objects, String key, Path scratch) {
        Path tmp = scratch.resolve("restore-scan-" + key.replace('/', '_'));
        try {
            Files.createDirectories(scratch);
            objects.download(key, tmp);
            return LogHighWater.maxPbn(tmp);
        } catch (IOException e) {
            throw StoreException.translate(STORE, tmp.toString(), null, e);
        } finally {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // a scratch file; the operator's temporary directory
            }
        }
    }

    /** Log ids the locations name that exist neither as a local file nor as the bucket object the catalog confirms. */
    private static List<Integer> missingLogs(MetadataDb db, TreeMap<Integer, Path> local, TreeMap<Integer, TreeSet<Long>> archived,
                                             String nodeName) {
        TreeSet<Integer> named = new TreeSet<>();
        new LocationIndex(db).forEach((pbn, logId, offset, len, fps, fpOff) -> {
            named.add(logId);
            return true;
        });
        List<Integer> missing = new ArrayList<>();
        for (int id : named) {
            if (local.containsKey(id)) {
                continue;
            }
            byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(LogArchive.uploadedKey(id)));
            TreeSet<Long> epochs = archived.get(id);
            if (nodeName != null && v != null && v.length > 8 && epochs != null && epochs.contains(Bytes.getLong(v, 0))) {
                continue;
            }
            missing.add(id);
        }
        return missing;
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw StoreException.translate(STORE, file.toString(), null, e);
        }
    }
}
