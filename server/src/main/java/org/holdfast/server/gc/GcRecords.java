package org.holdfast.server.gc;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * The GC's records in the catalog database (meta column family, keys prefixed {@code gc/}), all
 * written in the same batches as the catalog changes they belong to. Big-endian.
 *
 * <pre>
 * gc/o + u64 opId              → u8 kind (1 commit, 2 pin, 3 unpin, 4 raise), u64 volume internal id,
 *                                 u64 sequence, u64 expiry (raise only; a commit logged in parts:
 *                                 u32 entries per part, u32 parts, see {@link #commitParts}; else 0) (25 bytes)
 * gc/e + u64 volume + u64 seq  → u64 expiry, u8 flags (bit0 held, bit1 keep-last pinned)    (9 bytes)
 * gc/p + u64 volume            → UTF-8 retention policy (at most 200 bytes)
 * gc/l + u64 volume + u64 seq  → a retention lock, versioned: see {@link #encodeLock} (docs/architecture.md)
 * gc.next-op-id (meta long)    → next operation id
 * gc.protect-scan-from (long)  → first PBN the next start re-protects
 * gc.routed-through (long)     → a master with data on workers: its GC's last operation when it last
 *                                 closed (every one up to it routed); equal to gc.next-op-id − 1 only
 *                                 if no operation was recorded since (WorkerGcExport relies on it)
 * </pre>
 */
final class GcRecords {
    static final String NEXT_OP_ID = "gc.next-op-id";
    /** PBNs from here on were stored after the last start's re-protection scan. */
    static final String PROTECT_SCAN_FROM = "gc.protect-scan-from";
    /** A master with data on workers: every operation up to this one was routed when its GC last closed. */
    static final String ROUTED_THROUGH = "gc.routed-through";
    static final int KIND_COMMIT = 1;
    static final int KIND_PIN = 2;
    static final int KIND_UNPIN = 3;
    static final int KIND_RAISE = 4;
    /** Operator deleted a volume: sequence = its newest snapshot, expiry field = that snapshot's block count. */
    static final int KIND_DELETE_VOLUME = 5;
    static final int HELD = 1;
    static final int KEEP_LAST_PINNED = 2;
    private static final int MAX_POLICY_BYTES = 200;
    private static final byte[] OP = "gc/o".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EXP = "gc/e".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] POLICY = "gc/p".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LOCK = "gc/l".getBytes(StandardCharsets.US_ASCII);
    static final int LOCK_VERSION = 1;
    private static final int MAX_LOCK_BY_BYTES = 200;

    /** One logged GC operation. */
    record Op(long id, int kind, long volume, long sequence, long expiry) {
        /** Operations logged under this record: a commit in parts uses the ids id..id+parts-1. */
        int parts() {
            return kind == KIND_COMMIT && expiry != 0 ? (int) expiry : 1;
        }

        /** Delta entries per part of a commit logged in parts. */
        int partEntries() {
            return (int) (expiry >>> 32);
        }

        /** The last operation id this record accounts for. */
        long lastId() {
            return id + parts() - 1;
        }
    }

    /**
     * The expiry field of a commit whose bookkeeping is logged as {@code parts} operations of at
     * most {@code partEntries} delta entries each: u32 entries per part (high half), u32 parts.
     */
    static long commitParts(int partEntries, int parts) {
        if (partEntries < 1 || parts < 2) {
            throw new IllegalArgumentException("a commit in parts needs at least 2 parts of at least 1 entry");
        }
        return ((long) partEntries << 32) | parts;
    }

    /** A snapshot's retention lock as stored; {@code until} 0 means no date. */
    record LockRecord(long volume, long sequence, int mode, long until, long placedAt, String placedBy) {
    }

    /** A snapshot's GC state. */
    record SnapshotGc(long sequence, long expiry, int flags) {
        boolean held() {
            return (flags & HELD) != 0;
        }

        boolean keepLastPinned() {
            return (flags & KEEP_LAST_PINNED) != 0;
        }
    }

    private final MetadataDb db;
    private final MetadataDb.Column meta = MetadataDb.Column.META;

    GcRecords(MetadataDb db) {
        this.db = db;
    }

    MetadataDb db() {
        return db;
    }

    private static byte[] key(byte[] prefix, long a, long b, int longs) {
        byte[] k = new byte[4 + 8 * longs];
        System.arraycopy(prefix, 0, k, 0, 4);
        Bytes.putLong(k, 4, a);
        if (longs > 1) {
            Bytes.putLong(k, 12, b);
        }
        return k;
    }

    void putOp(MetadataBatch batch, Op op) {
        byte[] v = new byte[25];
        v[0] = (byte) op.kind();
        Bytes.putLong(v, 1, op.volume());
        Bytes.putLong(v, 9, op.sequence());
        Bytes.putLong(v, 17, op.expiry());
        db.put(batch, meta, key(OP, op.id(), 0, 1), v);
    }

    void deleteOp(MetadataBatch batch, long id) {
        db.delete(batch, meta, key(OP, id, 0, 1));
    }

    /** Operations with id greater than {@code after}, in id order. */
    List<Op> opsAfter(long after) {
        List<Op> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(meta)) {
            for (it.seek(key(OP, after + 1, 0, 1)); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (k.length != 12 || !Bytes.startsWith(k, OP)) {
                    break;
                }
                byte[] v = it.value();
                if (v.length != 25) {
                    throw new CorruptDataException("gc-records", db.path(), "op " + Bytes.getLong(k, 4), "value of " + v.length + " bytes");
                }
                out.add(new Op(Bytes.getLong(k, 4), v[0], Bytes.getLong(v, 1), Bytes.getLong(v, 9), Bytes.getLong(v, 17)));
            }
        }
        return out;
    }

    /** Operations with id at or below {@code upTo} (to trim once the GC log has them for good), in id order. */
    List<Op> opsUpTo(long upTo) {
        List<Op> out = new ArrayList<>();
        for (Op op : opsAfter(0)) {
            if (op.id() > upTo) {
                break;
            }
            out.add(op);
        }
        return out;
    }

    /** The operation with the highest id at or below {@code id}, if any (a commit in parts may reach past it). */
    Optional<Op> opAtOrBefore(long id) {
        Op found = null;
        for (Op op : opsUpTo(id)) {
            found = op;
        }
        return Optional.ofNullable(found);
    }

    void putSnapshot(MetadataBatch batch, long volume, SnapshotGc s) {
        byte[] v = new byte[9];
        Bytes.putLong(v, 0, s.expiry());
        v[8] = (byte) s.flags();
        db.put(batch, meta, key(EXP, volume, s.sequence(), 2), v);
    }

    void deleteSnapshot(MetadataBatch batch, long volume, long sequence) {
        db.delete(batch, meta, key(EXP, volume, sequence, 2));
    }

    /** GC state of a volume's snapshots, ascending sequence. */
    List<SnapshotGc> snapshots(long volume) {
        List<SnapshotGc> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(meta)) {
            for (it.seek(key(EXP, volume, 0, 2)); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (k.length != 20 || !Bytes.startsWith(k, EXP) || Bytes.getLong(k, 4) != volume) {
                    break;
                }
                byte[] v = it.value();
                if (v.length != 9) {
                    throw new CorruptDataException("gc-records", db.path(), "snapshot " + volume + "@" + Bytes.getLong(k, 12),
                            "value of " + v.length + " bytes");
                }
                out.add(new SnapshotGc(Bytes.getLong(k, 12), Bytes.getLong(v, 0), v[8]));
            }
        }
        return out;
    }

    /** GC state of one snapshot, if it has any (read with its volume's, as {@link #snapshots} does). */
    Optional<SnapshotGc> snapshot(long volume, long sequence) {
        return snapshots(volume).stream().filter(s -> s.sequence() == sequence).findFirst();
    }

    void putPolicy(MetadataBatch batch, long volume, String policy) {
        byte[] v = policy.getBytes(StandardCharsets.UTF_8);
        if (v.length > MAX_POLICY_BYTES) {
            throw new IllegalArgumentException("retention policy longer than " + MAX_POLICY_BYTES + " bytes");
        }
        db.put(batch, meta, key(POLICY, volume, 0, 1), v);
    }

    void deletePolicy(MetadataBatch batch, long volume) {
        db.delete(batch, meta, key(POLICY, volume, 0, 1));
    }

    /** The volume's stored policy text, or null. */
    String policy(long volume) {
        byte[] v = db.get(meta, key(POLICY, volume, 0, 1));
        if (v == null) {
            return null;
        }
        if (v.length > MAX_POLICY_BYTES) {
            throw new CorruptDataException("gc-records", db.path(), "policy of volume " + volume, "longer than " + MAX_POLICY_BYTES);
        }
        return new String(v, StandardCharsets.UTF_8);
    }

    /**
     * Lock value, big-endian: u8 version (1), u8 mode (1 governance, 2 compliance), u64 until (epoch
     * ms, 0 = no date), u64 placed-at (epoch ms), u16 n, n bytes UTF-8 placed-by (at most 200).
     */
    static byte[] encodeLock(LockRecord l) {
        byte[] by = l.placedBy().getBytes(StandardCharsets.UTF_8);
        if (by.length > MAX_LOCK_BY_BYTES) {
            by = java.util.Arrays.copyOf(by, MAX_LOCK_BY_BYTES);
        }
        byte[] v = new byte[20 + by.length];
        v[0] = LOCK_VERSION;
        v[1] = (byte) l.mode();
        Bytes.putLong(v, 2, l.until());
        Bytes.putLong(v, 10, l.placedAt());
        v[18] = (byte) (by.length >>> 8);
        v[19] = (byte) by.length;
        System.arraycopy(by, 0, v, 20, by.length);
        return v;
    }

    static LockRecord decodeLock(long volume, long sequence, byte[] v, String path) {
        if (v.length < 20 || v[0] != LOCK_VERSION) {
            throw new CorruptDataException("gc-records", path, "lock " + volume + "@" + sequence,
                    v.length < 1 ? "empty value" : "version " + v[0] + " or length " + v.length + " not understood (expected version 1)");
        }
        int n = ((v[18] & 0xff) << 8) | (v[19] & 0xff);
        if (v.length != 20 + n || (v[1] != 1 && v[1] != 2)) {
            throw new CorruptDataException("gc-records", path, "lock " + volume + "@" + sequence, "mode " + v[1] + ", length " + v.length);
        }
        return new LockRecord(volume, sequence, v[1], Bytes.getLong(v, 2), Bytes.getLong(v, 10),
                new String(v, 20, n, StandardCharsets.UTF_8));
    }

    void putLock(MetadataBatch batch, LockRecord l) {
        db.put(batch, meta, key(LOCK, l.volume(), l.sequence(), 2), encodeLock(l));
    }

    void deleteLock(MetadataBatch batch, long volume, long sequence) {
        db.delete(batch, meta, key(LOCK, volume, sequence, 2));
    }

    /** The lock of one snapshot, or null. */
    LockRecord lock(long volume, long sequence) {
        byte[] v = db.get(meta, key(LOCK, volume, sequence, 2));
        return v == null ? null : decodeLock(volume, sequence, v, db.path());
    }

    /** Every lock record, by volume then sequence (locks are few: one scan of their prefix). */
    List<LockRecord> locks() {
        List<LockRecord> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(meta)) {
            for (it.seek(LOCK); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (k.length != 20 || !Bytes.startsWith(k, LOCK)) {
                    break;
                }
                out.add(decodeLock(Bytes.getLong(k, 4), Bytes.getLong(k, 12), it.value(), db.path()));
            }
        }
        return out;
    }

}
