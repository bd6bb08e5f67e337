package org.holdfast.server.store;

import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.rocksdb.ColumnFamilyHandle;

/**
 * PBN → its possession fingerprint (pf, {@link PossessionProof}) and, for a block of a dedup domain
 * other than {@code default}, the key the fingerprint index knows it by, in the {@code possession}
 * column family. The server checks an agent's possession tag against the pf before it counts a
 * block as a duplicate, and GC needs the index key to make the index forget a freed block.
 *
 * <p>Key: u64 PBN, big-endian. Value: 16-byte pf (default domain), or 16-byte pf followed by the
 * 32-byte domain key (any other domain). A PBN without an entry (stored before possession proofs
 * existed) has no known pf: its possession is proven by uploading its payload once, which then
 * records the pf. Entries go with their block: {@link DataStore#forget} deletes both; the entries a
 * master keeps of a worker's blocks ({@code holdfast.cluster.data=workers}) go with that worker's
 * stale marks ({@link #deleteAll}).
 */
public final class PossessionIndex {
    /** Bytes of a value without a domain key. */
    public static final int PF_ONLY_BYTES = PossessionProof.PF_BYTES;
    /** Bytes of a value with a domain key. */
    public static final int WITH_KEY_BYTES = PossessionProof.PF_BYTES + Fingerprint.BYTES;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    PossessionIndex(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.POSSESSION);
    }

    /**
     * Records the pf of {@code pbns[0..n)} (16 bytes each in {@code pfs}) and, if {@code keys} is not
     * null, their domain keys (32 bytes each), in one synced batch: the index may learn a domain key
     * only once GC can find it here.
     */
    public void putAll(long[] pbns, byte[] pfs, byte[] keys, int n) {
        if (n == 0) {
            return;
        }
        try (MetadataBatch batch = new MetadataBatch()) {
            for (int i = 0; i < n; i++) {
                byte[] key = new byte[8];
                Bytes.putLong(key, 0, pbns[i]);
                byte[] v = new byte[keys == null ? PF_ONLY_BYTES : WITH_KEY_BYTES];
                System.arraycopy(pfs, i * PossessionProof.PF_BYTES, v, 0, PossessionProof.PF_BYTES);
                if (keys != null) {
                    System.arraycopy(keys, i * Fingerprint.BYTES, v, PossessionProof.PF_BYTES, Fingerprint.BYTES);
                }
                db.put(batch, cf, key, v);
            }
            db.write(batch, true);
        }
    }

    /**
     * Deletes the entries of {@code pbns[0..n)} in one synced batch: a worker's sweep freed those blocks
     * (the master keeps the entries of a worker's range, whose store forgets only its own records).
     */
    public void deleteAll(long[] pbns, int n) {
        if (n == 0) {
            return;
        }
        try (MetadataBatch batch = new MetadataBatch()) {
            for (int i = 0; i < n; i++) {
                delete(batch, pbns[i]);
            }
            db.write(batch, true);
        }
    }

    /** Adds the removal of {@code pbn}'s entry to a batch (GC freed the block). */
    void delete(MetadataBatch batch, long pbn) {
        byte[] key = new byte[8];
        Bytes.putLong(key, 0, pbn);
        db.delete(batch, cf, key);
    }

    /**
     * Loads the pf of every {@code pbns[i]} ({@code i < n}, PBN 0 skipped) into {@code pfs} at
     * {@code i * 16}; {@code found[i]} says whether one is recorded. One iterator for the batch:
     * a PBN following the previous one costs a step, not a seek. {@code value} is scratch of
     * {@link #WITH_KEY_BYTES}, {@code key} of 8 bytes.
     */
    public void pfs(long[] pbns, int n, byte[] pfs, boolean[] found, byte[] key, byte[] value) {
        try (CheckedIterator it = db.iterator(cf)) {
            long at = -1;
            for (int i = 0; i < n; i++) {
                long pbn = pbns[i];
                found[i] = false;
                if (pbn <= 0) {
                    continue;
                }
                if (moveTo(it, pbn, at, key, value) < 0) {
                    at = -1;
                    continue;
                }
                at = pbn;
                System.arraycopy(value, 0, pfs, i * PossessionProof.PF_BYTES, PossessionProof.PF_BYTES);
                found[i] = true;
            }
        }
    }

    /**
     * Replaces entry {@code i} of {@code fps} (32 bytes each) with the domain key recorded for
     * {@code pbns[i]}, where there is one; entries of default-domain blocks stay as they are
     * (there the key is the fingerprint).
     */
    public void indexKeys(long[] pbns, int n, byte[] fps) {
        indexKeys(pbns, n, fps, null);
    }

    /**
     * As {@link #indexKeys(long[], int, byte[])}; {@code recorded[i]} (if not null) says whether
     * {@code pbns[i]} has an entry. Without one the block's domain is unknown: a backup that has not
     * recorded it yet (it records it before the index learns it), or one stored before possession proofs.
     */
    public void indexKeys(long[] pbns, int n, byte[] fps, boolean[] recorded) {
        byte[] key = new byte[8];
        byte[] value = new byte[WITH_KEY_BYTES];
        try (CheckedIterator it = db.iterator(cf)) {
            long at = -1;
            for (int i = 0; i < n; i++) {
                int len = moveTo(it, pbns[i], at, key, value);
                if (recorded != null) {
                    recorded[i] = len >= 0;
                }
                if (len < 0) {
                    at = -1;
                    continue;
                }
                at = pbns[i];
                if (len == WITH_KEY_BYTES) {
                    System.arraycopy(value, PossessionProof.PF_BYTES, fps, i * Fingerprint.BYTES, Fingerprint.BYTES);
                }
            }
        }
    }

    /** Positions {@code it} on {@code pbn} (a step from {@code at} = pbn - 1, else a seek); its value's length, or -1 if absent. */
    private int moveTo(CheckedIterator it, long pbn, long at, byte[] key, byte[] value) {
        int len = it.valueAtLongKey(pbn, at, key, value);
        if (len < 0) {
            return -1;
        }
        if (len != PF_ONLY_BYTES && len != WITH_KEY_BYTES) {
            throw new CorruptDataException("possession-index", db.path(), "pbn " + pbn, "value has " + len + " bytes, expected "
                    + PF_ONLY_BYTES + " or " + WITH_KEY_BYTES);
        }
        return len;
    }
}
