package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;
import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.zip.CRC32C;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.store.object.ObjectMissingException;
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
 * <li>compaction after the backup moved records within their logs (PBNs never change): the restored
 *     locations are pointed at where the log's current copy holds them now; blocks it no longer holds
 *     (freed after the backup) and logs that exist nowhere are reported: those blocks cannot be read,
 *     so they are marked bad ({@link BadBlocks}, in batches of one synced write each): the next backup
 *     holding their content repairs them, like blocks a verify found damaged.</li>
 * </ul>
 *
 * Listing the local logs is {@link StoreRecovery#logFiles}, the same code recovery uses at open.
 */
public final class StoreAfterRestore {
    private static final String STORE = "catalog-restore";
    /** Lost blocks marked bad per synced write: bounds the memory a restore of a large store holds. */
    static final int MARK_BATCH = 10_000;

    /**
     * What was done: the backup's durable point, the new active log, the PBN high-water mark before
     * and after, logs scanned for PBNs, logs confirmed from the bucket, locations moved to where
     * compaction put their records, the blocks (and their logs) that are gone, and how many of those
     * were newly marked bad (the rest were bad already).
     */
    public record Report(int backupLogId, long backupLogLength, int newLogId, long pbnReservedBefore, long pbnReservedAfter,
                         int logsScanned, int logsAdopted, long blocksRelocated, long blocksLost, List<Integer> missingLogs,
                         long blocksMarkedBad) {
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
        TreeMap<Integer, Path> local = StoreRecovery.logFiles(logDir);
        if (objects == null && LogArchive.inUse(db)) {
            // without the bucket its logs' ids and PBNs are unknown: they would be handed out again
            throw new CatalogRestoreRefusedException(db.path(), "the restored catalog's server archived its data logs to an object"
                    + " store, but no object store settings were given: run catalog-restore again with --holdfast.store.backend=s3"
                    + " and the server's --holdfast.store.s3.* settings");
        }
        RestoredCatalogOwnership.check(db, local); // before anything is written
        String nodeName = objects == null ? null : nodeName(db, node);
        TreeMap<Integer, TreeSet<Long>> archived = new TreeMap<>();
        if (objects != null) {
            for (String key : objects.list(nodeName + "/logs/")) {
                long[] ide = LogKeys.parseKey(nodeName, key);
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
                highest = Math.max(highest, LogRecords.maxPbn(file));
                scanned++;
            }
            TreeSet<Long> epochs = archived.get(id);
            if (epochs != null) {
                String key = LogKeys.key(nodeName, id, epochs.first());
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
                if (db.get(MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(e.getKey()))) == null) {
                    // the newest copy: a compaction's, whose older one is deleted or about to be
                    db.put(b, MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(e.getKey())),
                            UploadRecords.uploadRecord(e.getValue().last(), nodeName));
                    adopted++;
                }
            }
            byte[] point = new byte[12];
            Bytes.putInt(point, 0, newLog);
            Bytes.putLong(point, 4, DATA_LOG_HEADER_BYTES);
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes(FormatVersions.META_DURABLE_POINT), point);
            db.putMetaLong(b, FormatVersions.META_PBN_RESERVED, Math.max(reservedBefore, reservedAfter));
            // a compaction intent the backup caught is long carried out; kept, the next start would move a
            // later compaction's leftover copy over the log the locations (relocated below) describe
            db.delete(b, MetadataDb.Column.META, MetadataDb.bytes(Compactor.META_INTENT));
            db.write(b, true);
        }
        TreeSet<Integer> moved = new TreeSet<>(moved(db, local, archived, nodeName, objects));
        TreeMap<Integer, Long> named = new TreeMap<>(); // locations per log, of the logs that moved
        new LocationIndex(db).forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
            if (moved.contains(logId)) {
                named.merge(logId, 1L, Long::sum);
            }
            return true;
        });
        long relocated = 0;
        long lost = 0;
        List<Integer> lostLogs = new ArrayList<>();
        Map<Integer, Set<Long>> held = new HashMap<>(); // per moved log, the PBNs its current copy holds
        Set<Integer> nowhere = new HashSet<>(); // logs neither local nor in the bucket
        for (int id : moved) {
            if (local.get(id) == null && archived.get(id) == null) {
                nowhere.add(id);
            }
            Set<Long> found = new HashSet<>();
            held.put(id, found);
            long[] r = relocate(db, id, local.get(id), archived.get(id), nodeName, objects, scratch, found);
            relocated += r[0];
            long gone = Math.max(0, named.getOrDefault(id, 0L) - r[1]);
            if (gone > 0) {
                lost += gone;
                lostLogs.add(id);
            }
        }
        long marked = lost == 0 ? 0 : markLost(db, logDir, held, nowhere, lostLogs);
        return new Report(backupLog, backupLength, newLog, reservedBefore, Math.max(reservedBefore, reservedAfter), scanned, adopted,
                relocated, lost, lostLogs, marked);
    }

    /**
     * Marks bad every block a location names in a moved log whose current copy does not hold it:
     * unmarked, the volumes would not be flagged and each incremental backup on top of a snapshot
     * that uses them would inherit the hole. Returns how many were newly marked.
     */
    private static long markLost(MetadataDb db, Path logDir, Map<Integer, Set<Long>> held, Set<Integer> nowhere,
                                 List<Integer> lostLogs) {
        BadBlocks bad = BadBlocks.of(db);
        Set<Integer> lossy = new HashSet<>(lostLogs);
        List<BadBlocks.Mark> batch = new ArrayList<>();
        long[] marked = new long[1];
        new LocationIndex(db).forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
            if (lossy.contains(logId) && !held.get(logId).contains(pbn)) {
                batch.add(new BadBlocks.Mark(pbn, Arrays.copyOfRange(fps, fpOff, fpOff + Fingerprint.BYTES),
                        logDir.resolve(DataLog.fileName(logId)).toString(),
                        (nowhere.contains(logId) ? "data log is missing"
                                : "the record is gone from its data log (freed and compacted away after the catalog backup)")
                                + ", found by catalog-restore (record at offset " + offset + ")"));
                if (batch.size() == MARK_BATCH) {
                    marked[0] += bad.markAll(batch);
                    batch.clear();
                }
            }
            return true;
        });
        if (!batch.isEmpty()) {
            marked[0] += bad.markAll(batch);
        }
        return marked[0];
    }

    /**
     * Points the restored locations in log {@code id} at where its current copy (the local file, else
     * the newest object) holds their blocks now: compaction moved records within the log after the
     * backup, never changing a PBN. Blocks the copy no longer holds (freed after the backup) keep their
     * old location and stay unreadable. With an object store the upload record is made to name the
     * copy read, so that the server reads the same one. Returns {locations moved, locations the copy
     * holds (moved or not)}; the PBNs of the latter are added to {@code found}.
     */
    private static long[] relocate(MetadataDb db, int id, Path file, TreeSet<Long> epochs, String nodeName, ObjectStore objects,
                                 Path scratch, Set<Long> found) {
        Path copy = file;
        Long epoch = null;
        if (copy == null) {
            if (epochs == null) {
                return new long[2]; // gone everywhere
            }
            epoch = epochs.last();
            copy = scratch.resolve("restore-relocate-" + id + ".hfl");
            try {
                Files.createDirectories(scratch);
            } catch (IOException e) {
                throw StoreException.translate(STORE, scratch.toString(), null, e);
            }
            objects.download(LogKeys.key(nodeName, id, epoch), copy);
        } else if (objects != null) {
            long e = LogUploads.epochOf(file);
            epoch = epochs != null && epochs.contains(e) ? e : null;
        }
        try (MetadataBatch b = new MetadataBatch()) {
            long[] count = new long[2];
            byte[] key = new byte[8];
            LogRecords.walk(copy, (pbn, offset, lengthField) -> {
                Bytes.putLong(key, 0, pbn);
                byte[] v = db.get(MetadataDb.Column.LOCATIONS, key);
                if (v == null || Bytes.getInt(v, 0) != id) {
                    return; // freed, or its location is in another log (a repair)
                }
                count[1]++;
                found.add(pbn);
                if (Bytes.getLong(v, 4) != offset || Bytes.getInt(v, 12) != lengthField) {
                    byte[] nv = v.clone();
                    Bytes.putLong(nv, 4, offset);
                    Bytes.putInt(nv, 12, lengthField);
                    db.put(b, MetadataDb.Column.LOCATIONS, key.clone(), nv);
                    count[0]++;
                }
            });
            if (objects != null) {
                byte[] uk = MetadataDb.bytes(UploadRecords.uploadedKey(id));
                if (epoch != null) {
                    db.put(b, MetadataDb.Column.META, uk, UploadRecords.uploadRecord(epoch, nodeName));
                } else {
                    db.delete(b, MetadataDb.Column.META, uk); // a local copy not in the bucket: the server uploads it
                }
            }
            db.write(b, true);
            return count;
        } finally {
            if (file == null) {
                try {
                    Files.deleteIfExists(copy);
                } catch (IOException ignored) {
                    // a scratch file in the operator's temporary directory
                }
            }
        }
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
            return LogRecords.maxPbn(tmp);
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

    /**
     * Log ids the locations name whose records cannot be read where the restored catalog says: the log
     * is neither a local file nor the bucket object the catalog confirms, or it was rewritten since the
     * backup (compaction). Per log, the record at the highest offset a location names is checked
     * (magic, header checksum, stored length, PBN): compaction keeps the order of records and drops
     * at least one, so if any record before it had moved, that one would have moved too.
     */
    private static List<Integer> moved(MetadataDb db, TreeMap<Integer, Path> local, TreeMap<Integer, TreeSet<Long>> archived,
                                             String nodeName, ObjectStore objects) {
        TreeMap<Integer, long[]> last = new TreeMap<>(); // log id -> {offset, pbn, location length field}
        new LocationIndex(db).forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
            long[] l = last.get(logId);
            if (l == null || offset > l[0]) {
                last.put(logId, new long[] {offset, pbn, location});
            }
            return true;
        });
        List<Integer> missing = new ArrayList<>();
        for (Map.Entry<Integer, long[]> e : last.entrySet()) {
            int id = e.getKey();
            long[] l = e.getValue();
            byte[] header = null;
            if (local.containsKey(id)) {
                header = headerAt(local.get(id), l[0]);
                if (objects != null && !uploadRecordNames(db, id, LogUploads.epochOf(local.get(id)))) {
                    // rewritten since the backup though its named records stayed in place (compaction
                    // dropped only later ones): the restored upload record names an object the
                    // compaction deleted, which the server would fetch once its cache lets the file go
                    header = null;
                }
            } else if (nodeName != null) {
                byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)));
                TreeSet<Long> epochs = archived.get(id);
                if (v != null && v.length > 8 && epochs != null && epochs.contains(Bytes.getLong(v, 0))) {
                    String key = LogKeys.key(nodeName, id, Bytes.getLong(v, 0));
                    OptionalLong size = objects.size(key); // a range past a shorter (compacted) object's end is refused
                    try {
                        header = size.isEmpty() || l[0] + HEADER_PROBE > size.getAsLong() ? null : objects.getRange(key, l[0], HEADER_PROBE);
                    } catch (ObjectMissingException gone) {
                        header = null; // deleted since the listing: as gone as if it had not been listed
                    }
                }
            }
            if (header == null || !holds(header, l[1], (int) l[2])) {
                missing.add(id);
            }
        }
        return missing;
    }

    /** Whether log {@code id} has no upload record (never archived) or one that names {@code epoch}. */
    private static boolean uploadRecordNames(MetadataDb db, int id, long epoch) {
        byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)));
        return v == null || v.length >= 8 && Bytes.getLong(v, 0) == epoch;
    }

    /** A record header and the first two stored bytes (a frame's member map span). */
    private static final int HEADER_PROBE = RECORD_HEADER_BYTES + 2;

    private static byte[] headerAt(Path file, long offset) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.allocate((int) Math.max(0, Math.min(HEADER_PROBE, ch.size() - offset)));
            while (buf.hasRemaining() && ch.read(buf, offset + buf.position()) >= 0) {
                // a positional read may return fewer bytes
            }
            return buf.array();
        } catch (IOException e) {
            throw StoreException.translate(STORE, file.toString(), null, e);
        }
    }

    /** Whether {@code h} is the header of the record a location of {@code pbn} with length field {@code location} names. */
    static boolean holds(byte[] h, long pbn, int location) {
        if (h.length < HEADER_PROBE) {
            return false;
        }
        boolean member = FrameFormat.isMember(location);
        if (Bytes.getInt(h, 0) != (member ? FormatVersions.FRAME_MAGIC : FormatVersions.RECORD_MAGIC)
                || !RecordFormat.crcMatches(h, 0, 28, Bytes.getInt(h, 28), new CRC32C())
                || Bytes.getInt(h, 20) != FrameFormat.recordStored(location)) {
            return false;
        }
        long first = Bytes.getLong(h, 8);
        if (!member) {
            return first == pbn;
        }
        int span = (h[5] & FrameFormat.FLAG_MEMBER_MAP) != 0 ? Bytes.getShort(h, RECORD_HEADER_BYTES) & 0xFFFF : Bytes.getShort(h, 6) & 0xFFFF;
        return pbn >= first && pbn < first + span;
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw StoreException.translate(STORE, file.toString(), null, e);
        }
    }
}
