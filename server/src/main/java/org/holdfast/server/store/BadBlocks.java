package org.holdfast.server.store;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.holdfast.common.id.Fingerprint;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The registry of bad blocks: PBNs whose stored record failed a check (verify, a restore or image
 * download read, compaction). A bad PBN is never offered as a duplicate; the next upload of the
 * same content repairs it in place ({@link DataStore#repair}), which clears the mark.
 *
 * <h2>Layout</h2>
 * Entries live in the {@code verify} column family under key {@code 'B' || u64 PBN} (big-endian).
 * Value, version {@value #VERSION}:
 * <pre>
 * offset size field
 *   0     1   version (1)
 *   1     8   found at, epoch millis
 *   9    32   fingerprint the location index held for the PBN (what a repair must match)
 *  41     2   length F of the file name
 *  43     F   data log file (UTF-8)
 * 43+F    *   what the check found (UTF-8)
 * </pre>
 * Marks are written synced at once (a batch of them in one write); all of them are kept in memory too (a healthy store has none,
 * a sick one a few), so the dedup check is a map lookup.
 */
public final class BadBlocks {
    private static final System.Logger LOG = System.getLogger(BadBlocks.class.getName());
    /** Layout version of a bad-block value. */
    public static final int VERSION = 1;
    /** Key prefix of bad-block entries in the {@code verify} column family. */
    static final byte PREFIX = 'B';

    /** One bad block: where it was found and what was wrong. */
    public record BadBlock(long pbn, long foundAtMillis, String file, String problem, byte[] fingerprint) {
    }

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;
    private final Map<Long, BadBlock> bad = new ConcurrentHashMap<>();
    private final Map<String, Long> byFingerprint = new ConcurrentHashMap<>();
    private volatile LongConsumer onMarked = pbn -> { };
    private final AtomicLong repairedOnWorkers = new AtomicLong();

    BadBlocks(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.VERIFY);
        load();
    }

    private void load() {
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(new byte[] {PREFIX}); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (k.length == 0 || k[0] != PREFIX) {
                    break;
                }
                if (k.length != 9) {
                    throw new CorruptDataException("bad-blocks", db.path(), MetadataDb.hex(k), "key has " + k.length + " bytes, expected 9");
                }
                BadBlock b = decode(Bytes.getLong(k, 1), it.value());
                remember(b);
            }
        }
    }

    private BadBlock decode(long pbn, byte[] v) {
        if (v.length < 43 || v[0] != VERSION) {
            throw new CorruptDataException("bad-blocks", db.path(), "pbn " + pbn,
                    "value of " + v.length + " bytes with version " + (v.length == 0 ? -1 : v[0]) + "; expected version " + VERSION);
        }
        long at = Bytes.getLong(v, 1);
        byte[] fp = new byte[Fingerprint.BYTES];
        System.arraycopy(v, 9, fp, 0, Fingerprint.BYTES);
        int f = ((v[41] & 0xff) << 8) | (v[42] & 0xff);
        if (43 + f > v.length) {
            throw new CorruptDataException("bad-blocks", db.path(), "pbn " + pbn, "file name runs past the value");
        }
        String file = new String(v, 43, f, StandardCharsets.UTF_8);
        String problem = new String(v, 43 + f, v.length - 43 - f, StandardCharsets.UTF_8);
        return new BadBlock(pbn, at, file, problem, fp);
    }

    private static byte[] encode(BadBlock b) {
        byte[] file = b.file().getBytes(StandardCharsets.UTF_8);
        if (file.length > 0xffff) {
            file = Arrays.copyOf(file, 0xffff);
        }
        byte[] problem = b.problem().getBytes(StandardCharsets.UTF_8);
        byte[] v = new byte[43 + file.length + problem.length];
        v[0] = VERSION;
        Bytes.putLong(v, 1, b.foundAtMillis());
        System.arraycopy(b.fingerprint(), 0, v, 9, Fingerprint.BYTES);
        v[41] = (byte) (file.length >>> 8);
        v[42] = (byte) file.length;
        System.arraycopy(file, 0, v, 43, file.length);
        System.arraycopy(problem, 0, v, 43 + file.length, problem.length);
        return v;
    }

    static byte[] key(long pbn) {
        byte[] k = new byte[9];
        k[0] = PREFIX;
        Bytes.putLong(k, 1, pbn);
        return k;
    }

    private void remember(BadBlock b) {
        bad.put(b.pbn(), b);
        byFingerprint.put(hex(b.fingerprint(), 0), b.pbn());
    }

    /** Calls {@code listener} with each PBN newly marked bad (on the marking thread; keep it short). */
    public void onMarked(LongConsumer listener) {
        this.onMarked = listener;
    }

    /**
     * Marks {@code pbn} bad (synced at once) unless it already is; {@code fps[fpOff..+32)} is the
     * fingerprint the location index holds for it. Returns true if it was newly marked.
     */
    public boolean mark(long pbn, byte[] fps, int fpOff, String file, String problem) {
        if (bad.containsKey(pbn)) {
            return false;
        }
        return markAll(List.of(new Mark(pbn, Arrays.copyOfRange(fps, fpOff, fpOff + Fingerprint.BYTES), file, problem))) == 1;
    }

    /** A block to mark bad with {@link #markAll}: its PBN, the fingerprint the location index holds for it, where and what. */
    public record Mark(long pbn, byte[] fingerprint, String file, String problem) {
    }

    /**
     * Marks every block of {@code marks} bad that is not already, in one synced write: a catalog
     * restore or a missing data log may mark thousands at once, and one fsync each would take
     * minutes. Returns how many were newly marked. The one path every mark takes, so each is logged
     * and announced the same way.
     */
    public int markAll(List<Mark> marks) {
        List<BadBlock> added = new ArrayList<>(marks.size());
        synchronized (this) {
            Set<Long> inBatch = new HashSet<>();
            long now = System.currentTimeMillis();
            try (MetadataBatch batch = new MetadataBatch()) {
                for (Mark m : marks) {
                    if (bad.containsKey(m.pbn()) || !inBatch.add(m.pbn())) {
                        continue;
                    }
                    BadBlock b = new BadBlock(m.pbn(), now, m.file() == null ? "" : m.file(), m.problem() == null ? "" : m.problem(),
                            Arrays.copyOf(m.fingerprint(), Fingerprint.BYTES));
                    db.put(batch, cf, key(b.pbn()), encode(b));
                    added.add(b);
                }
                if (added.isEmpty()) {
                    return 0;
                }
                db.write(batch, true);
            }
            added.forEach(this::remember);
        }
        BadBlock first = added.get(0);
        LOG.log(Level.ERROR, "bad blocks marked: " + added.size() + " (first PBN " + first.pbn() + " in " + first.file() + ": " + first.problem()
                + "); they are no longer dedup targets and the next backup holding their content repairs them");
        added.forEach(b -> onMarked.accept(b.pbn()));
        return added.size();
    }

    /** The registry as stored in {@code db}, for a tool that works on the catalog without a data store (catalog-restore). */
    public static BadBlocks of(MetadataDb db) {
        return new BadBlocks(db);
    }

    /** True if {@code pbn} is marked bad. */
    public boolean isBad(long pbn) {
        return !bad.isEmpty() && bad.containsKey(pbn);
    }

    /** True if no block is marked bad. */
    public boolean isEmpty() {
        return bad.isEmpty();
    }

    /** The bad PBN whose fingerprint is {@code fps[off..off+32)}, or 0 if none. */
    public long holding(byte[] fps, int off) {
        if (bad.isEmpty()) {
            return 0;
        }
        Long p = byFingerprint.get(hex(fps, off));
        return p == null ? 0 : p;
    }

    public Optional<BadBlock> get(long pbn) {
        return Optional.ofNullable(bad.get(pbn));
    }

    /** Every bad block, in PBN order. */
    public List<BadBlock> all() {
        List<BadBlock> out = new ArrayList<>(bad.values());
        out.sort(Comparator.comparingLong(BadBlock::pbn));
        return out;
    }

    public int count() {
        return bad.size();
    }

    /**
     * Removes the marks of {@code pbns} in one synced write: blocks repaired on the data workers that
     * hold them, once the snapshot commit naming the repairs is durable. Returns how many were marked.
     */
    public int clearRepaired(List<Long> pbns) {
        List<Long> marked = remove(pbns);
        if (marked.isEmpty()) {
            return 0;
        }
        repairedOnWorkers.addAndGet(marked.size());
        LOG.log(Level.INFO, "bad blocks repaired in place on their workers, marks cleared: " + marked);
        return marked.size();
    }

    /**
     * Removes the marks of {@code pbns} in one synced write: blocks their data workers freed (GC) that
     * no snapshot references, so nothing can read them or take them as a duplicate any more. Returns
     * the PBNs that were marked.
     */
    public List<Long> clearFreed(List<Long> pbns) {
        List<Long> marked = remove(pbns);
        if (!marked.isEmpty()) {
            LOG.log(Level.INFO, "bad blocks freed by their workers' GC and referenced by no snapshot, marks cleared: " + marked);
        }
        return marked;
    }

    /** Deletes the marks of those of {@code pbns} that are marked, in one synced write; answers them. */
    private List<Long> remove(List<Long> pbns) {
        List<Long> marked = new ArrayList<>(pbns.size());
        Set<Long> inBatch = new HashSet<>(); // thousands at once after a catalog restore: no list scan per PBN
        synchronized (this) {
            try (MetadataBatch batch = new MetadataBatch()) {
                for (long p : pbns) {
                    if (bad.containsKey(p) && inBatch.add(p)) {
                        db.delete(batch, cf, key(p));
                        marked.add(p);
                    }
                }
                if (marked.isEmpty()) {
                    return marked;
                }
                db.write(batch, true);
            }
            marked.forEach(this::cleared);
        }
        return marked;
    }

    /** Marks {@link #clearRepaired} cleared since start: bad blocks repaired in place on their data workers. */
    public long repairedOnWorkers() {
        return repairedOnWorkers.get();
    }

    /** Adds the removal of {@code pbn}'s mark to a batch (a repair or GC's freeing); call {@link #cleared} once it is written. */
    void clear(MetadataBatch batch, long pbn) {
        db.delete(batch, cf, key(pbn));
    }

    /** Forgets the in-memory mark of {@code pbn} after the batch from {@link #clear} was written. */
    void cleared(long pbn) {
        BadBlock b = bad.remove(pbn);
        if (b != null) {
            byFingerprint.remove(hex(b.fingerprint(), 0), pbn);
        }
    }

    private static String hex(byte[] b, int off) {
        StringBuilder sb = new StringBuilder(64);
        for (int i = 0; i < Fingerprint.BYTES; i++) {
            sb.append(Character.forDigit((b[off + i] >> 4) & 0xf, 16)).append(Character.forDigit(b[off + i] & 0xf, 16));
        }
        return sb.toString();
    }
}
