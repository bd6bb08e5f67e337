package org.holdfast.server.catalog;

import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The daily statistics series in the catalog (column family {@code stats}): one record per UTC day.
 * Key: u64 epoch day, big-endian (keys sort by date). Value: a version byte first, then the day's
 * totals ({@link #encode}; docs/architecture.md has the byte table). A day's record is rewritten in
 * place while the day lasts; {@link #deleteBefore} bounds the series.
 */
public final class DailyStatsStore {
    static final int VERSION = 1;
    static final int VALUE_BYTES = 1 + 7 * 8;

    /**
     * One day's totals: stored payload and logical bytes and the dedup ratio as last measured that
     * day, bytes backed up and restored during the day, retained snapshots, and when it was written.
     */
    public record Day(LocalDate day, long storedBytes, long logicalBytes, double dedupRatio, long bytesIngested,
                      long bytesRestored, long snapshots, long updatedAtMillis) {
    }

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public DailyStatsStore(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.STATS);
    }

    /** Writes (or rewrites) the record of {@code d.day()}; unsynced: a lost write is redone at the next update. */
    public void put(Day d) {
        db.put(cf, key(d.day()), encode(d));
    }

    public Optional<Day> get(LocalDate day) {
        byte[] v = db.get(cf, key(day));
        return v == null ? Optional.empty() : Optional.of(decode(day, v, db.path()));
    }

    /** The records from {@code from} to {@code to} (both inclusive), oldest first, at most {@code limit}. */
    public List<Day> range(LocalDate from, LocalDate to, int limit) {
        List<Day> out = new ArrayList<>();
        byte[] k = new byte[8];
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(key(from)); it.isValid() && out.size() < limit; it.next()) {
                it.key(k);
                LocalDate day = LocalDate.ofEpochDay(Bytes.getLong(k, 0));
                if (day.isAfter(to)) {
                    break;
                }
                out.add(decode(day, it.value(), db.path()));
            }
        }
        return out;
    }

    /** Deletes every record of a day before {@code day}; returns how many. */
    public int deleteBefore(LocalDate day) {
        int n = 0;
        try (CheckedIterator it = db.iterator(cf); MetadataBatch b = new MetadataBatch()) {
            byte[] end = key(day);
            for (it.seekToFirst(); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (java.util.Arrays.compareUnsigned(k, end) >= 0) {
                    break;
                }
                db.delete(b, cf, k);
                n++;
            }
            if (n > 0) {
                db.write(b, false);
            }
        }
        return n;
    }

    static byte[] key(LocalDate day) {
        byte[] k = new byte[8];
        Bytes.putLong(k, 0, day.toEpochDay());
        return k;
    }

    /** u8 version 1, u64 storedBytes, u64 logicalBytes, f64 dedupRatio, u64 bytesIngested, u64 bytesRestored, u64 snapshots, u64 updatedAtMillis. */
    static byte[] encode(Day d) {
        return ByteBuffer.allocate(VALUE_BYTES).put((byte) VERSION).putLong(d.storedBytes()).putLong(d.logicalBytes())
                .putDouble(d.dedupRatio()).putLong(d.bytesIngested()).putLong(d.bytesRestored()).putLong(d.snapshots())
                .putLong(d.updatedAtMillis()).array();
    }

    static Day decode(LocalDate day, byte[] v, String path) {
        if (v.length < 1 || (v[0] & 0xff) != VERSION) {
            throw new CorruptDataException("stats", path, day.toString(), "daily statistics record of version "
                    + (v.length < 1 ? "none" : v[0] & 0xff) + " (this server reads " + VERSION + ")");
        }
        if (v.length != VALUE_BYTES) {
            throw new CorruptDataException("stats", path, day.toString(), "daily statistics record has " + v.length
                    + " bytes, expected " + VALUE_BYTES);
        }
        ByteBuffer b = ByteBuffer.wrap(v, 1, VALUE_BYTES - 1);
        return new Day(day, b.getLong(), b.getLong(), b.getDouble(), b.getLong(), b.getLong(), b.getLong(), b.getLong());
    }
}
