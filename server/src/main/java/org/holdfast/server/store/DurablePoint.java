package org.holdfast.server.store;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The data store's durable point (meta key {@link FormatVersions#META_DURABLE_POINT}, 12 bytes: u32
 * log id, u64 length): every record before it in that log, and in every older log, is on disk and
 * indexed; anything after it was never referenced.
 */
record DurablePoint(int logId, long length) {
    private static final int BYTES = 12;

    /** The durable point in {@code db}, or null if the catalog has none (a new store). */
    static DurablePoint read(MetadataDb db, String store) {
        byte[] v = db.get(db.handle(MetadataDb.Column.META), MetadataDb.bytes(FormatVersions.META_DURABLE_POINT));
        if (v == null) {
            return null;
        }
        if (v.length != BYTES) {
            throw new CorruptDataException(store, db.path(), FormatVersions.META_DURABLE_POINT, "durable point has " + v.length + " bytes");
        }
        return new DurablePoint(Bytes.getInt(v, 0), Bytes.getLong(v, 4));
    }

    /** Puts this point into {@code batch} and writes the batch synced (one atomic switch with the batch's locations). */
    void write(MetadataDb db, MetadataBatch batch) {
        byte[] v = new byte[BYTES];
        Bytes.putInt(v, 0, logId);
        Bytes.putLong(v, 4, length);
        db.put(batch, db.handle(MetadataDb.Column.META), MetadataDb.bytes(FormatVersions.META_DURABLE_POINT), v);
        db.write(batch, true);
    }

    /**
     * Opens the log this point names, {@code file} (null if recovery found none), refusing it if it
     * is missing or shorter than the point: data was lost underneath the store.
     */
    DataLog openLog(Path dir, Path file, boolean readOnly, String store) {
        if (file == null || !Files.exists(file)) {
            throw new CorruptDataException(store, dir.toString(), DataLog.fileName(logId), "the durable point names a data log that is missing");
        }
        DataLog log = readOnly ? DataLog.openReadOnly(file, logId) : DataLog.open(file, logId);
        if (log.size() < length) {
            long size = log.size();
            log.close();
            throw new CorruptDataException(store, file.toString(), null,
                    "log is " + size + " bytes but " + length + " were durable: data was lost underneath the store");
        }
        return log;
    }
}
