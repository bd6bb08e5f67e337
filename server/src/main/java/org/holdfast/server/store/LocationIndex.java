package org.holdfast.server.store;

import org.holdfast.common.id.Fingerprint;
import org.rocksdb.ColumnFamilyHandle;

/**
 * PBN → where its record lives and which fingerprint it holds, in the {@code locations} column
 * family. Key: u64 PBN, big-endian (so iteration is PBN order). Value (48 bytes): u32 log id,
 * u64 offset of the record header, u32 stored length, 32-byte fingerprint. For a member of a frame
 * record the length field is {@link FrameFormat#memberLocation} (flag, member count, the frame's
 * stored length); {@link #forEach} and {@link #storedBytes} give a member its share of the frame.
 *
 * <p>Compaction rewrites values here; nothing else in the system stores a location.
 */
public final class LocationIndex {
    static final int VALUE_BYTES = 4 + 8 + 4 + Fingerprint.BYTES;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public LocationIndex(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.LOCATIONS);
    }

    /**
     * Adds the location of {@code pbn} to a batch; {@code storedLength} is the length field: a block
     * record's stored length, or a frame member's {@link FrameFormat#memberLocation}.
     */
    public void put(MetadataBatch batch, long pbn, int logId, long offset, int storedLength, byte[] fps, int fpOff) {
        put(batch, pbn, logId, offset, storedLength, fps, fpOff, new byte[8], new byte[VALUE_BYTES]);
    }

    /**
     * As {@link #put(MetadataBatch, long, int, long, int, byte[], int)}, with the caller's {@code key}
     * (8 bytes) and {@code v} ({@link #VALUE_BYTES}) as scratch: the batch copies both at once, so a
     * caller that adds a sync's worth of locations reuses two arrays instead of two per block.
     */
    void put(MetadataBatch batch, long pbn, int logId, long offset, int storedLength, byte[] fps, int fpOff, byte[] key, byte[] v) {
        Bytes.putLong(key, 0, pbn);
        Bytes.putInt(v, 0, logId);
        Bytes.putLong(v, 4, offset);
        Bytes.putInt(v, 12, storedLength);
        System.arraycopy(fps, fpOff, v, 16, Fingerprint.BYTES);
        db.put(batch, cf, key, v);
    }

    /** Adds the removal of {@code pbn}'s location to a batch (GC freed it). */
    public void delete(MetadataBatch batch, long pbn) {
        byte[] key = new byte[8];
        Bytes.putLong(key, 0, pbn);
        db.delete(batch, cf, key);
    }

    /** Loads the location and fingerprint of {@code pbn} into {@code into}; false if unknown. */
    boolean get(long pbn, StoredBlock into) {
        Bytes.putLong(into.locationKey, 0, pbn);
        int n = db.get(cf, into.locationKey, into.locationValue);
        if (n < 0) {
            return false;
        }
        if (n != VALUE_BYTES) {
            throw new CorruptDataException("location-index", db.path(), "pbn " + pbn, "value has " + n + " bytes, expected " + VALUE_BYTES);
        }
        byte[] v = into.locationValue;
        into.pbn = pbn;
        into.logId = Bytes.getInt(v, 0);
        into.offset = Bytes.getLong(v, 4);
        into.location = Bytes.getInt(v, 12);
        into.storedLength = FrameFormat.share(into.location);
        System.arraycopy(v, 16, into.fingerprint, 0, Fingerprint.BYTES);
        return true;
    }

    /**
     * Loads the locations of {@code n} PBNs ({@code pbns[from..from+n)}, entries with
     * {@code skip[i]} set are left alone) into {@code into}'s slots 0..n-1 through one iterator:
     * a PBN following the previous one costs a {@code next()} instead of a point lookup. Returns the
     * index of the first PBN without a location, or -1 if all were found.
     */
    int getAll(long[] pbns, int from, int n, boolean[] skip, BlockBatch into) {
        try (CheckedIterator it = db.iterator(cf)) {
            long at = -1;
            byte[] k = into.locationKey;
            byte[] v = into.locationValue;
            for (int i = 0; i < n; i++) {
                if (skip[i]) {
                    continue;
                }
                long pbn = pbns[from + i];
                if (!moveTo(it, pbn, at, k, v)) {
                    return i;
                }
                at = pbn;
                into.pbn[i] = pbn;
                into.logId[i] = Bytes.getInt(v, 0);
                into.offset[i] = Bytes.getLong(v, 4);
                into.location[i] = Bytes.getInt(v, 12);
                System.arraycopy(v, 16, into.fingerprints, i * Fingerprint.BYTES, Fingerprint.BYTES);
            }
            return -1;
        }
    }

    /**
     * Loads the fingerprints of {@code pbns[0..n)} into {@code out} (32 bytes each, at i * 32)
     * through one iterator, for the entries with {@code want[i]} set; {@code found[i]} tells whether
     * the PBN has a location. {@code key} (8 bytes) and {@code value} ({@value #VALUE_BYTES}) are
     * the caller's scratch.
     */
    void fingerprints(long[] pbns, int n, boolean[] want, byte[] out, boolean[] found, byte[] key, byte[] value) {
        try (CheckedIterator it = db.iterator(cf)) {
            long at = -1;
            for (int i = 0; i < n; i++) {
                if (!want[i]) {
                    continue;
                }
                long pbn = pbns[i];
                if (!moveTo(it, pbn, at, key, value)) {
                    found[i] = false;
                    at = -1;
                    continue;
                }
                at = pbn;
                System.arraycopy(value, 16, out, i * Fingerprint.BYTES, Fingerprint.BYTES);
                found[i] = true;
            }
        }
    }

    /**
     * For each record, whether {@code pbn}'s location still names log {@code logId} at the record's
     * old offset (false once GC freed it). One iterator; the records are in PBN order, so mostly steps.
     */
    boolean[] stillAt(LiveRecords records, int logId) {
        boolean[] out = new boolean[records.size()];
        byte[] key = new byte[8];
        byte[] value = new byte[VALUE_BYTES];
        try (CheckedIterator it = db.iterator(cf)) {
            long at = -1;
            for (int i = 0; i < records.size(); i++) {
                long pbn = records.pbn(i);
                if (!moveTo(it, pbn, at, key, value)) {
                    at = -1;
                    continue;
                }
                at = pbn;
                out[i] = Bytes.getInt(value, 0) == logId && Bytes.getLong(value, 4) == records.offset(i)
                        && Bytes.getInt(value, 12) == records.length(i);
            }
        }
        return out;
    }

    /**
     * Positions {@code it} on {@code pbn} (one step when it sits on {@code at} = pbn - 1, else a seek)
     * and reads its value into {@code value}; false if the PBN has no location. {@code key} (8 bytes)
     * is scratch.
     */
    private boolean moveTo(CheckedIterator it, long pbn, long at, byte[] key, byte[] value) {
        int len = it.valueAtLongKey(pbn, at, key, value);
        if (len < 0) {
            return false;
        }
        if (len != VALUE_BYTES) {
            throw new CorruptDataException("location-index", db.path(), "pbn " + pbn, "value has " + len + " bytes, expected " + VALUE_BYTES);
        }
        return true;
    }

    /**
     * Adds up the stored lengths of {@code pbns[0..n)} (ascending, so one iterator mostly steps);
     * a PBN without a location (freed, or the zero block) counts 0.
     */
    public long storedBytes(long[] pbns, int n) {
        byte[] key = new byte[8];
        byte[] value = new byte[VALUE_BYTES];
        long sum = 0;
        try (CheckedIterator it = db.iterator(cf)) {
            long at = -1;
            for (int i = 0; i < n; i++) {
                long pbn = pbns[i];
                if (!moveTo(it, pbn, at, key, value)) {
                    at = -1;
                    continue;
                }
                at = pbn;
                sum += FrameFormat.share(Bytes.getInt(value, 12));
            }
        }
        return sum;
    }

    /** The highest PBN with a location, or 0 if none. */
    long maxPbn() {
        try (CheckedIterator it = db.iterator(cf)) {
            it.seekToLast();
            return it.isValid() ? Bytes.getLong(it.key(), 0) : 0;
        }
    }

    /**
     * Visits every (PBN, log id, record offset, stored length) in PBN order; a frame member's stored
     * length is its share of the frame ({@link FrameFormat#share}).
     */
    public void forEach(LocationVisitor visitor) {
        forEachFrom(0, visitor);
    }

    /**
     * As {@link #forEach}, from the first PBN at or after {@code firstPbn}: a long reader (the
     * rebuild of a worker's index) reads a page at a time, stopping the visit at the end of the page,
     * so that no iterator stays open (pinning what RocksDB would otherwise drop) between the pages.
     */
    public void forEachFrom(long firstPbn, LocationVisitor visitor) {
        forEachLocation(firstPbn,
                (pbn, logId, offset, location, fps, fpOff) -> visitor.visit(pbn, logId, offset, FrameFormat.share(location), fps, fpOff));
    }

    /** As {@link #forEach}, with the raw length field (a frame member's {@link FrameFormat#memberLocation}); for compaction. */
    void forEachLocation(LocationVisitor visitor) {
        forEachLocation(0, visitor);
    }

    private void forEachLocation(long firstPbn, LocationVisitor visitor) {
        try (CheckedIterator it = db.iterator(cf)) {
            byte[] v = new byte[VALUE_BYTES];
            byte[] k = new byte[8];
            Bytes.putLong(k, 0, Math.max(0, firstPbn));
            for (it.seek(k); it.isValid(); it.next()) {
                it.key(k);
                it.value(v);
                if (!visitor.visit(Bytes.getLong(k, 0), Bytes.getInt(v, 0), Bytes.getLong(v, 4), Bytes.getInt(v, 12), v, 16)) {
                    return;
                }
            }
        }
    }

    /** Receives one location; return false to stop. */
    @FunctionalInterface
    public interface LocationVisitor {
        boolean visit(long pbn, int logId, long offset, int storedLength, byte[] fps, int fpOff);
    }
}
