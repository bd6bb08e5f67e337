package org.holdfast.server.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The catalog's records of confirmed uploads: {@code meta} key {@value #META_UPLOADED}{@code <id %08x>},
 * holding the log's epoch and the node name it was uploaded under, so a confirmed log's object key
 * ({@link LogKeys#key}) follows from the catalog alone, even after the node is renamed.
 */
final class UploadRecords {
    /** Meta key prefix of a confirmed upload, followed by the log id in hex; value: the log's epoch. */
    static final String META_UPLOADED = "store.object.log/";

    private final MetadataDb db;
    // the name new uploads go under
    private final String node;

    UploadRecords(MetadataDb db, String node) {
        this.db = db;
        this.node = node;
    }

    static String uploadedKey(int id) {
        return META_UPLOADED + String.format("%08x", id);
    }

    /** Whether log {@code id}'s upload is confirmed (its local file may then go). */
    boolean isUploaded(int id) {
        return uploadedKeyOf(id) != null;
    }

    /** The object key a confirmed upload of log {@code id} went to, or null. */
    String uploadedKeyOf(int id) {
        byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)));
        if (v == null) {
            return null;
        }
        if (v.length <= 8) {
            throw new CorruptDataException("log-archive", db.path(), uploadedKey(id), "upload record has " + v.length + " bytes");
        }
        return LogKeys.key(new String(v, 8, v.length - 8, StandardCharsets.UTF_8), id, Bytes.getLong(v, 0));
    }

    /** The object key confirmed log {@code id} is stored under; refuses a log not confirmed. */
    String objectKeyOf(int id) {
        String key = uploadedKeyOf(id);
        if (key == null) {
            throw new IllegalStateException("data log " + id + " is not confirmed uploaded");
        }
        return key;
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

    /** Every confirmed upload with its digest, in log id order (the sealed-log report). */
    List<LogArchive.UploadedLog> uploadedLogs() {
        List<LogArchive.UploadedLog> out = new ArrayList<>();
        for (int id : uploadedIds()) {
            byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(uploadedKey(id)));
            if (v == null || v.length <= 8) {
                continue; // deleted since the listing (or corrupt: its reads say so)
            }
            long epoch = Bytes.getLong(v, 0);
            out.add(new LogArchive.UploadedLog(id, LogKeys.key(new String(v, 8, v.length - 8, StandardCharsets.UTF_8), id, epoch), epoch,
                    SealedDigests.get(db, id, epoch)));
        }
        return out;
    }

    byte[] uploadRecord(long epoch) {
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
}
