package org.holdfast.server.catalog;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The master's outbox of distributed GC (column family {@code gc-outbox}, layout in
 * docs/architecture.md, "GC deltas on the worker link"): each worker's shares of GC operations that
 * the worker has not acknowledged yet, one entry per {@code GC_DELTA} part, so that a share survives
 * a master restart and a worker that is down. Key: u32 worker id, u64 delta id (operation id ×
 * 2^20 + part), both big-endian, so one worker's entries are contiguous and in delta id order.
 * Value: u8 version 1, u32 count (1 .. 65,536), then per update u8 kind (1 RC add, 2 raise expiry,
 * 3 pin add), u64 PBN, u64 value (big-endian): {@code 5 + 17 × count} bytes.
 *
 * <p>Beside a worker's entries, under the 4-byte key u32 worker id (which sorts before the worker's
 * first entry), its routed mark: u8 version 1, u64 the highest delta id ever routed to the worker
 * (9 bytes). It is put in the same synced batch as the entries it covers, so it is never behind an
 * entry the worker could have acknowledged, and it is never deleted: after the entries are gone it
 * still says which deltas the worker must have logged ({@code worker-fsck} compares counts when the
 * worker's mark is at or above it). A catalog from before it has no such key: unknown, never 0.
 *
 * <p>Writers: the routed bookkeeping puts a share's parts and the routed mark (into the caller's
 * batch, written synced before the master logs its own share); the worker's sender deletes what the
 * worker acknowledged. Putting a key again writes the same bytes (a re-drive after a crash), which is
 * why both are safe in any order. Reads check every length against the frame limit before allocating.
 */
public final class GcOutbox {
    private static final String STORE = "gc-outbox";
    /** Format version of a value; the next version must still read this one (golden bytes in GcOutboxTest). */
    public static final int VERSION = 1;
    /** Format version of a routed mark's value; the next version must still read this one (golden bytes in GcOutboxTest). */
    public static final int ROUTED_VERSION = 1;
    private static final int ENTRY_KEY = 12;
    private static final int ROUTED_KEY = 4;
    private static final int ROUTED_VALUE = 1 + 8;
    private static final int HEADER = 1 + 4;
    private static final int UPDATE = 1 + 8 + 8;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public GcOutbox(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(Column.GC_OUTBOX);
    }

    /** Adds the entry of part {@code d} for worker {@code workerId} to {@code batch}. */
    public void put(MetadataBatch batch, long workerId, GcDelta d) {
        db.put(batch, cf, key(workerId, d.deltaId()), encode(d));
    }

    /**
     * Adds worker {@code workerId}'s routed mark {@code deltaId} (the highest delta id routed to it,
     * its last entry in the same batch) to {@code batch}. The caller keeps it from going down.
     */
    public void putRoutedMark(MetadataBatch batch, long workerId, long deltaId) {
        db.put(batch, cf, routedKey(workerId), encodeRoutedMark(deltaId));
    }

    /**
     * The highest delta id ever routed to worker {@code workerId}, or empty if the catalog has no
     * routed mark for it (nothing routed to it since this catalog kept marks, e.g. written by a
     * release without them): unknown, not 0.
     */
    public OptionalLong routedMark(long workerId) {
        byte[] v = db.get(cf, routedKey(workerId));
        return v == null ? OptionalLong.empty() : OptionalLong.of(decodeRoutedMark(workerId, v));
    }

    /** Writes {@code batch} synced: the entries are on disk when this returns. */
    public void writeSynced(MetadataBatch batch) {
        db.write(batch, true);
    }

    /** Up to {@code max} of worker {@code workerId}'s entries with a delta id above {@code afterDeltaId}, in delta id order. */
    public List<GcDelta> after(long workerId, long afterDeltaId, int max) {
        List<GcDelta> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(key(workerId, afterDeltaId + 1)); it.isValid() && out.size() < max; it.next()) {
                byte[] k = it.key();
                if (workerOf(k) != workerId) {
                    break;
                }
                out.add(decode(k, it.value()));
            }
        }
        return out;
    }

    /** Deletes worker {@code workerId}'s entries at or below {@code deltaId} (unsynced: one lost delete is sent again, harmlessly); returns how many. */
    public int deleteUpTo(long workerId, long deltaId) {
        int n = 0;
        try (MetadataBatch b = new MetadataBatch(); CheckedIterator it = db.iterator(cf)) {
            for (it.seek(key(workerId, 0)); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (workerOf(k) != workerId || deltaIdOf(k) > deltaId) {
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

    /**
     * Puts the deletion of every key, entries and routed marks of all workers, into {@code batch}
     * (catalog-restore of a master with data=workers: a restored outbox is older than what the
     * workers applied, and their counts are rebuilt instead); returns how many entries it drops.
     */
    public long discardAll(MetadataBatch batch) {
        long entries = 0;
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                byte[] k = it.key();
                db.delete(batch, cf, k);
                if (k.length == ENTRY_KEY) {
                    entries++;
                }
            }
        }
        return entries;
    }

    /** Worker {@code workerId}'s entries (O(entries): a scan of its keys). */
    public long count(long workerId) {
        long n = 0;
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(key(workerId, 0)); it.isValid() && workerOf(it.key()) == workerId; it.next()) {
                n++;
            }
        }
        return n;
    }

    /** Worker {@code workerId}'s highest delta id in the outbox, or 0 if it has no entry (one seek). */
    public long lastDeltaId(long workerId) {
        try (CheckedIterator it = db.iterator(cf)) {
            it.seekForPrev(key(workerId, -1L)); // u64 all ones: the worker's highest possible key
            // the worker's routed-mark key sorts before its entries: landing on it means no entry
            return it.isValid() && it.key().length == ENTRY_KEY && workerOf(it.key()) == workerId ? deltaIdOf(it.key()) : 0;
        }
    }

    /** The workers with at least one entry, ascending. */
    public TreeSet<Long> workers() {
        TreeSet<Long> out = new TreeSet<>();
        try (CheckedIterator it = db.iterator(cf)) {
            it.seekToFirst();
            while (it.isValid()) {
                long w = workerOf(it.key());
                if (it.key().length != ENTRY_KEY) {
                    it.next(); // a routed mark: the worker may have no entry
                    continue;
                }
                out.add(w);
                if (w == 0xFFFF_FFFFL) {
                    break;
                }
                it.seek(key(w + 1, 0));
            }
        }
        return out;
    }

    /** The key of worker {@code workerId}'s part {@code deltaId}: u32 worker id, u64 delta id. */
    public static byte[] key(long workerId, long deltaId) {
        return ByteBuffer.allocate(12).putInt((int) workerId).putLong(deltaId).array();
    }

    /** The key of worker {@code workerId}'s routed mark: u32 worker id. */
    public static byte[] routedKey(long workerId) {
        return ByteBuffer.allocate(ROUTED_KEY).putInt((int) workerId).array();
    }

    /** The value of a routed mark: u8 version 1, u64 delta id. */
    public static byte[] encodeRoutedMark(long deltaId) {
        return ByteBuffer.allocate(ROUTED_VALUE).put((byte) ROUTED_VERSION).putLong(deltaId).array();
    }

    private long decodeRoutedMark(long workerId, byte[] v) {
        if (v.length != ROUTED_VALUE || v[0] != ROUTED_VERSION) {
            throw new CorruptDataException(STORE, db.path(), "worker " + workerId + ", routed mark", "unreadable routed mark: "
                    + v.length + " bytes with version " + (v.length > 0 ? v[0] : -1) + " (this release reads " + ROUTED_VALUE
                    + " bytes of version " + ROUTED_VERSION + "); worker-fsck cannot rely on it: restore the master's catalog from a"
                    + " backup, or delete the key (the mark is then unknown until the next delta is routed to the worker)");
        }
        long deltaId = ByteBuffer.wrap(v, 1, 8).getLong();
        if (deltaId < 0) {
            throw new CorruptDataException(STORE, db.path(), "worker " + workerId + ", routed mark", "routed mark " + deltaId
                    + " is negative; restore the master's catalog from a backup");
        }
        return deltaId;
    }

    /** The value of part {@code d}: version, count, then each update. */
    public static byte[] encode(GcDelta d) {
        ByteBuffer v = ByteBuffer.allocate(HEADER + UPDATE * d.count());
        v.put((byte) VERSION).putInt(d.count());
        for (int i = 0; i < d.count(); i++) {
            v.put(d.kinds()[i]).putLong(d.pbns()[i]).putLong(d.values()[i]);
        }
        return v.array();
    }

    /** The part stored under {@code key}; a value that is not a version 1 entry is corrupt data. */
    public GcDelta decode(byte[] key, byte[] value) {
        long deltaId = deltaIdOf(key);
        String where = "worker " + workerOf(key) + ", delta " + deltaId;
        if (key.length != 12) {
            throw corrupt(where, "key of " + key.length + " bytes (expected 12)");
        }
        if (value.length < HEADER || value[0] != VERSION) {
            throw corrupt(where, "value of " + value.length + " bytes with version " + (value.length > 0 ? value[0] : -1)
                    + " (this release reads version " + VERSION + ")");
        }
        ByteBuffer v = ByteBuffer.wrap(value);
        v.get();
        int count = v.getInt();
        if (count < 1 || count > ProtocolLimits.MAX_GC_DELTA_UPDATES || value.length != HEADER + (long) UPDATE * count) {
            throw corrupt(where, "count " + count + " in a value of " + value.length + " bytes (1.." + ProtocolLimits.MAX_GC_DELTA_UPDATES
                    + " updates of " + UPDATE + " bytes after a " + HEADER + "-byte header)");
        }
        byte[] kinds = new byte[count];
        long[] pbns = new long[count];
        long[] values = new long[count];
        for (int i = 0; i < count; i++) {
            kinds[i] = v.get();
            pbns[i] = v.getLong();
            values[i] = v.getLong();
        }
        try {
            return new GcDelta(GcDelta.opIdOf(deltaId), GcDelta.partOf(deltaId), count, kinds, pbns, values);
        } catch (IllegalArgumentException e) {
            throw corrupt(where, e.getMessage());
        }
    }

    private CorruptDataException corrupt(String where, String what) {
        return new CorruptDataException(STORE, db.path(), where, "unreadable GC outbox entry: " + what + "; the worker's share of"
                + " that operation cannot be sent: restore the master's catalog from a backup, then rebuild the worker's GC metadata");
    }

    private static long workerOf(byte[] key) {
        return ByteBuffer.wrap(key, 0, 4).getInt() & 0xFFFF_FFFFL;
    }

    private static long deltaIdOf(byte[] key) {
        return key.length < 12 ? -1 : ByteBuffer.wrap(key, 4, 8).getLong();
    }
}
