package org.holdfast.server.catalog;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.server.cluster.MembershipStore;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.cluster.NodeGeneration;
import org.holdfast.server.cluster.StartOverMark;
import org.holdfast.server.cluster.TakeoverFence;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The master's worker assignments in the {@code cluster} column family (layout in
 * docs/architecture.md, "Cluster membership"): key {@code 'w'} + u32 worker id (big-endian); value
 * u8 version 2, u64 epoch, u64 first PBN, u64 PBN limit, u64 first registered ms, u64 last
 * registered ms, u16 length + node name (UTF-8), u8 length + bound token id (ASCII, 0: not bound);
 * key {@code 'r'} alone: u64 highest worker id ever removed (absent: none); key {@code 's'} + u32
 * worker id: that worker's index start-over mark, u8 version 1, u64 at ms (worker's clock), u64
 * received ms (master's clock), u8 reason (the DEDUP_DONE code, {@link StartOverReason}); absent: no
 * mark (so a catalog written before marks were kept reads as none); key {@code 'a'} + u32 worker id:
 * that worker's takeover fence, u8 version 1, u64 highest archive epoch heard, u64 PBN floor; absent:
 * nothing heard; key {@code 'g'} + u32 worker id: that worker's node generation, u8 version 1, u64 issued, u64
 * acknowledged; absent: none issued; key {@code 'd'} + u32 worker id (+ u32 log id): its sealed-log records ({@link SealedLogStore}). Version 1 worker records (no
 * token id) are read as not bound; every write is version 2. Every write is synced: a registration
 * is answered only after its record is on disk.
 */
public final class ClusterStore implements MembershipStore {
    private static final System.Logger LOG = System.getLogger(ClusterStore.class.getName());
    private static final String STORE = "cluster";
    private static final byte WORKER = 'w';
    private static final byte[] REMOVED = {'r'};
    private static final byte START_OVER = 's';
    private static final int MARK_VERSION = 1;
    private static final int MARK_BYTES = 1 + 8 + 8 + 1;
    private static final byte FENCE = 'a';
    private static final int FENCE_VERSION = 1;
    private static final int FENCE_BYTES = 1 + 8 + 8;
    private static final byte GENERATION = 'g';
    private static final int GENERATION_VERSION = 1;
    private static final int GENERATION_BYTES = 1 + 8 + 8;
    static final byte[] TOLD_LOST_AFTER = {'l'};
    private static final int TOLD_VERSION = 1;
    private static final int TOLD_BYTES = 1 + 8;
    /** Version 1: no token id (before workers were bound to tokens); still read. */
    private static final int VERSION_UNBOUND = 1;
    private static final int VERSION = 2;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public ClusterStore(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(Column.CLUSTER);
    }

    @Override
    public List<WorkerRecord> workers() {
        List<WorkerRecord> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(new byte[] {WORKER}); it.isValid() && it.key()[0] == WORKER; it.next()) {
                out.add(decode(it.key(), it.value()));
            }
        }
        return out;
    }

    @Override
    public void put(WorkerRecord r) {
        byte[] name = r.nodeName().getBytes(StandardCharsets.UTF_8);
        byte[] token = r.tokenId().getBytes(StandardCharsets.US_ASCII);
        ByteBuffer v = ByteBuffer.allocate(1 + 5 * 8 + 2 + name.length + 1 + token.length);
        v.put((byte) VERSION).putLong(r.epoch()).putLong(r.range().first()).putLong(r.range().limit())
                .putLong(r.firstRegisteredMillis()).putLong(r.lastRegisteredMillis()).putShort((short) name.length).put(name)
                .put((byte) token.length).put(token);
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, cf, key(r.workerId()), v.array());
            db.write(b, true);
        }
    }

    @Override
    public void remove(long workerId) {
        try (MetadataBatch b = new MetadataBatch()) {
            db.delete(b, cf, key(workerId));
            db.delete(b, cf, markKey(workerId)); // ids are never handed out again: its mark answers nothing any more
            db.delete(b, cf, fenceKey(workerId)); // nor does its fence
            db.delete(b, cf, generationKey(workerId)); // nor its node generation
            new SealedLogStore(db).dropWorker(b, workerId); // nor do its sealed-log records
            db.put(b, cf, REMOVED, ByteBuffer.allocate(8).putLong(Math.max(workerId, highestRemovedId())).array());
            db.write(b, true);
        }
    }

    /**
     * Puts into {@code batch} that no id up to {@code workerId} is handed out again, as if removed
     * (a catalog restore: ids the lost master gave nodes after the backup are unknown to it).
     */
    public void retireIdsThrough(MetadataBatch batch, long workerId) {
        db.put(batch, cf, REMOVED, ByteBuffer.allocate(8).putLong(Math.max(workerId, highestRemovedId())).array());
    }

    @Override
    public long highestRemovedId() {
        byte[] v = db.get(cf, REMOVED);
        if (v == null) {
            return 0;
        }
        if (v.length != 8) {
            throw new CorruptDataException(STORE, db.path(), "72", "removed-worker mark of " + v.length
                    + " bytes (expected 8); restore the master's catalog from a backup");
        }
        return ByteBuffer.wrap(v).getLong();
    }

    static byte[] key(long workerId) {
        return ByteBuffer.allocate(5).put(WORKER).putInt((int) workerId).array();
    }

    static byte[] fenceKey(long workerId) {
        return ByteBuffer.allocate(5).put(FENCE).putInt((int) workerId).array();
    }

    /**
     * {@inheritDoc} An unreadable fence is corrupt data (the master refuses to start; restore its
     * catalog): left out, a stale node could register again and a takeover reuse PBNs.
     */
    @Override
    public Map<Long, TakeoverFence> takeoverFences() {
        return pairsByWorker(FENCE, FENCE_BYTES, FENCE_VERSION, "takeover fence", TakeoverFence::new);
    }

    /**
     * The records under key {@code prefix} + u32 worker id whose value is u8 {@code version} and two u64
     * ({@code bytes} in all), by worker id, each made by {@code of}; one that does not read (length,
     * version, or {@code of} refusing its numbers) is corrupt data naming {@code what}.
     */
    private <T> Map<Long, T> pairsByWorker(byte prefix, int bytes, int version, String what,
                                           java.util.function.BiFunction<Long, Long, T> of) {
        Map<Long, T> out = new TreeMap<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(new byte[] {prefix}); it.isValid() && it.key()[0] == prefix; it.next()) {
                byte[] k = it.key();
                byte[] v = it.value();
                String why = k.length != 5 ? "key of " + k.length + " bytes (expected 5)" : unreadable(v, bytes, version);
                T t = null;
                if (why == null) {
                    try {
                        t = of.apply(ByteBuffer.wrap(v).getLong(1), ByteBuffer.wrap(v).getLong(9));
                    } catch (IllegalArgumentException e) {
                        why = e.getMessage();
                    }
                }
                if (why != null) {
                    throw new CorruptDataException(STORE, db.path(), java.util.HexFormat.of().formatHex(k), "unreadable " + what + ": "
                            + why + "; restore the master's catalog from a backup");
                }
                out.put(ByteBuffer.wrap(k, 1, 4).getInt() & 0xffffffffL, t);
            }
        }
        return out;
    }

    @Override
    public void putTakeoverFence(long workerId, TakeoverFence f, boolean sync) {
        ByteBuffer v = ByteBuffer.allocate(FENCE_BYTES).put((byte) FENCE_VERSION).putLong(f.archiveEpoch()).putLong(f.pbnFloor());
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, cf, fenceKey(workerId), v.array());
            db.write(b, sync);
        }
    }

    static byte[] generationKey(long workerId) {
        return ByteBuffer.allocate(5).put(GENERATION).putInt((int) workerId).array();
    }

    /**
     * {@inheritDoc} An unreadable generation is corrupt data (the master refuses to start; restore its
     * catalog): left out, an older copy of a worker's range data could register again.
     */
    @Override
    public Map<Long, NodeGeneration> nodeGenerations() {
        return pairsByWorker(GENERATION, GENERATION_BYTES, GENERATION_VERSION, "node generation", NodeGeneration::new);
    }

    @Override
    public void putNodeGeneration(long workerId, NodeGeneration g) {
        ByteBuffer v = ByteBuffer.allocate(GENERATION_BYTES).put((byte) GENERATION_VERSION).putLong(g.issued()).putLong(g.acknowledged());
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, cf, generationKey(workerId), v.array());
            db.write(b, true);
        }
    }

    /**
     * {@inheritDoc} An unreadable value is corrupt data (the master refuses to start; restore its
     * catalog): read short, a takeover could start while a node still deletes under its lease.
     */
    @Override
    public java.time.Duration toldLostAfter() {
        byte[] v = db.get(cf, TOLD_LOST_AFTER);
        if (v == null) {
            return null;
        }
        String why = unreadable(v, TOLD_BYTES, TOLD_VERSION);
        if (why == null && ByteBuffer.wrap(v).getLong(1) <= 0) {
            why = "a lost-after of " + ByteBuffer.wrap(v).getLong(1) + " ms";
        }
        if (why != null) {
            throw new CorruptDataException(STORE, db.path(), "6c", "unreadable lost-after told to workers: " + why
                    + "; restore the master's catalog from a backup");
        }
        return java.time.Duration.ofMillis(ByteBuffer.wrap(v).getLong(1));
    }

    @Override
    public void putToldLostAfter(java.time.Duration lostAfter) {
        byte[] v = ByteBuffer.allocate(TOLD_BYTES).put((byte) TOLD_VERSION).putLong(lostAfter.toMillis()).array();
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, cf, TOLD_LOST_AFTER, v);
            db.write(b, true);
        }
    }

    /** Why value {@code v} of a versioned record ({@code bytes} long, version byte first) does not read; null if it does. */
    private static String unreadable(byte[] v, int bytes, int version) {
        return v.length != bytes ? v.length + " bytes (expected " + bytes + ")"
                : (v[0] & 0xff) != version ? "version " + (v[0] & 0xff) + " (this build reads " + version + ")" : null;
    }

    static byte[] markKey(long workerId) {
        return ByteBuffer.allocate(5).put(START_OVER).putInt((int) workerId).array();
    }

    /**
     * {@inheritDoc} An unreadable mark is left out and logged (WARN), not thrown: a mark only tells
     * the operator to rebuild a worker's index, and the master must not refuse to start over one
     * (a corrupt value, a newer build's version after a downgrade); that worker's next rebuild
     * deletes it ({@link #clearStartOverMark}).
     */
    @Override
    public Map<Long, StartOverMark> startOverMarks() {
        Map<Long, StartOverMark> out = new TreeMap<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(new byte[] {START_OVER}); it.isValid() && it.key()[0] == START_OVER; it.next()) {
                byte[] k = it.key();
                try {
                    StartOverMark m = decodeMark(k, it.value()); // checks the key's length first
                    out.put(ByteBuffer.wrap(k, 1, 4).getInt() & 0xffffffffL, m);
                } catch (CorruptDataException e) {
                    long id = k.length == 5 ? ByteBuffer.wrap(k, 1, 4).getInt() & 0xffffffffL : -1;
                    LOG.log(System.Logger.Level.WARNING, e.getMessage() + (id < 0 ? "; it is ignored (its key names no worker id)"
                            : "; it is ignored: if worker " + id + " may have started its index over, rebuild it (POST"
                            + " /api/v1/cluster/workers/" + id + "/rebuild), which also deletes the mark"));
                }
            }
        }
        return out;
    }

    @Override
    public void putStartOverMark(long workerId, StartOverMark m) {
        ByteBuffer v = ByteBuffer.allocate(MARK_BYTES).put((byte) MARK_VERSION).putLong(m.atMillis()).putLong(m.receivedAtMillis())
                .put((byte) m.reason().code());
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, cf, markKey(workerId), v.array());
            db.write(b, true);
        }
    }

    @Override
    public void clearStartOverMark(long workerId) {
        try (MetadataBatch b = new MetadataBatch()) {
            db.delete(b, cf, markKey(workerId));
            db.write(b, true);
        }
    }

    private StartOverMark decodeMark(byte[] key, byte[] value) {
        try {
            if (key.length != 5) {
                throw new IllegalArgumentException("key of " + key.length + " bytes");
            }
            ByteBuffer b = ByteBuffer.wrap(value);
            int version = b.get() & 0xff;
            if (version != MARK_VERSION) {
                throw new IllegalArgumentException("mark version " + version + " (this build reads " + MARK_VERSION + ")");
            }
            if (value.length != MARK_BYTES) {
                throw new IllegalArgumentException(value.length + " bytes (expected " + MARK_BYTES + ")");
            }
            long at = b.getLong();
            long received = b.getLong();
            return new StartOverMark(at, StartOverReason.ofCode(b.get() & 0xff), received);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new CorruptDataException(STORE, db.path(), java.util.HexFormat.of().formatHex(key),
                    "unreadable index start-over mark: " + e.getMessage());
        }
    }

    private WorkerRecord decode(byte[] key, byte[] value) {
        try {
            if (key.length != 5) {
                throw new IllegalArgumentException("key of " + key.length + " bytes");
            }
            long id = ByteBuffer.wrap(key, 1, 4).getInt() & 0xffffffffL;
            ByteBuffer b = ByteBuffer.wrap(value);
            int version = b.get() & 0xff;
            if (version != VERSION && version != VERSION_UNBOUND) {
                throw new IllegalArgumentException("record version " + version + " (this build reads " + VERSION_UNBOUND + " and "
                        + VERSION + ")");
            }
            long epoch = b.getLong();
            PbnRange range = new PbnRange(b.getLong(), b.getLong());
            long first = b.getLong();
            long last = b.getLong();
            byte[] name = new byte[b.getShort() & 0xffff];
            b.get(name);
            byte[] token = new byte[version == VERSION_UNBOUND ? 0 : b.get() & 0xff];
            b.get(token);
            if (b.hasRemaining()) {
                throw new IllegalArgumentException(b.remaining() + " trailing bytes");
            }
            return new WorkerRecord(id, new String(name, StandardCharsets.UTF_8), epoch, range, first, last,
                    new String(token, StandardCharsets.US_ASCII));
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new CorruptDataException(STORE, db.path(), java.util.HexFormat.of().formatHex(key),
                    "unreadable worker record: " + e.getMessage() + "; restore the master's catalog from a backup");
        }
    }
}
