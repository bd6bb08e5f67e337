package org.holdfast.server.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.rocksdb.ColumnFamilyHandle;

/**
 * What verification remembers, in the {@code verify} column family beside the bad blocks:
 * when each PBN was last read and found sound (so an incremental verify skips it within its
 * window), and each snapshot's last result.
 *
 * <h2>Layout</h2>
 * <pre>
 * 'V' || u64 PBN                      → u32 epoch seconds / 60 of the last sound read (4 bytes)
 * 'S' || u64 volume id || u64 seq     → version (1) | u64 verified at, epoch millis | u64 blocks checked
 *                                       | u32 n damaged (as found) | n × (u64 LBN, u64 PBN)
 * </pre>
 * PBN times are written unsynced (losing some costs a re-read, nothing else); snapshot results
 * synced. At most {@value #MAX_DAMAGED_LISTED} damaged blocks are listed per snapshot; the count
 * is exact. A freed PBN's time goes with it ({@link DataStore#forget}); a deleted snapshot's result
 * stays until the volume is verified again (a few dozen bytes).
 */
public final class VerifyLedger {
    /** Layout version of a snapshot result value. */
    public static final int VERSION = 1;
    /** Damaged blocks listed per snapshot result; more are counted, not listed. */
    public static final int MAX_DAMAGED_LISTED = 1000;
    private static final byte PBN_PREFIX = 'V';
    private static final byte SNAPSHOT_PREFIX = 'S';

    /** One damaged block of a snapshot. */
    public record Damage(long lbn, long pbn) {
    }

    /** A snapshot's last verification: when, how many blocks it references, and the damaged ones found. */
    public record SnapshotResult(long verifiedAtMillis, long blocksChecked, long damagedCount, List<Damage> damaged) {
    }

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public VerifyLedger(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.VERIFY);
    }

    static byte[] pbnKey(long pbn) {
        byte[] k = new byte[9];
        k[0] = PBN_PREFIX;
        Bytes.putLong(k, 1, pbn);
        return k;
    }

    private static byte[] snapshotKey(long volumeId, long sequence) {
        byte[] k = new byte[17];
        k[0] = SNAPSHOT_PREFIX;
        Bytes.putLong(k, 1, volumeId);
        Bytes.putLong(k, 9, sequence);
        return k;
    }

    /** Minutes since the epoch, the unit of PBN times. */
    public static int minutes(long millis) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, millis / 60_000));
    }

    /** The minute {@code pbn} was last found sound, or -1 if never (or not remembered). */
    public int verifiedAt(long pbn) {
        byte[] v = db.get(cf, pbnKey(pbn));
        if (v == null) {
            return -1;
        }
        if (v.length != 4) {
            throw new CorruptDataException("verify-ledger", db.path(), "pbn " + pbn, "value has " + v.length + " bytes, expected 4");
        }
        return Bytes.getInt(v, 0);
    }

    /** Records that {@code pbns[0..n)} were found sound at minute {@code minute} (one unsynced batch). */
    public void verified(long[] pbns, int n, int minute) {
        if (n == 0) {
            return;
        }
        byte[] v = new byte[4];
        Bytes.putInt(v, 0, minute);
        try (MetadataBatch batch = new MetadataBatch()) {
            for (int i = 0; i < n; i++) {
                db.put(batch, cf, pbnKey(pbns[i]), v);
            }
            db.write(batch, false);
        }
    }

    /** Forgets when {@code pbns} were found sound (one unsynced batch): the next pass reads them whatever its window. */
    public void forget(long[] pbns) {
        if (pbns.length == 0) {
            return;
        }
        try (MetadataBatch batch = new MetadataBatch()) {
            for (long p : pbns) {
                forget(batch, p);
            }
            db.write(batch, false);
        }
    }

    /** Adds the removal of {@code pbn}'s time to a batch (GC freed it). */
    void forget(MetadataBatch batch, long pbn) {
        db.delete(batch, cf, pbnKey(pbn));
    }

    /** Records a snapshot's result (synced). */
    public void putSnapshot(long volumeId, long sequence, SnapshotResult r) {
        int listed = Math.min(r.damaged().size(), MAX_DAMAGED_LISTED);
        byte[] v = new byte[1 + 8 + 8 + 4 + listed * 16];
        v[0] = VERSION;
        Bytes.putLong(v, 1, r.verifiedAtMillis());
        Bytes.putLong(v, 9, r.blocksChecked());
        Bytes.putInt(v, 17, (int) Math.min(Integer.MAX_VALUE, r.damagedCount()));
        for (int i = 0; i < listed; i++) {
            Bytes.putLong(v, 21 + i * 16, r.damaged().get(i).lbn());
            Bytes.putLong(v, 29 + i * 16, r.damaged().get(i).pbn());
        }
        try (MetadataBatch batch = new MetadataBatch()) {
            db.put(batch, cf, snapshotKey(volumeId, sequence), v);
            db.write(batch, true);
        }
    }

    /**
     * Adds one damaged block that a restore met to the snapshot's result (creating one with no verify
     * time if the snapshot was never verified), so the volume is flagged at once; the next verify
     * pass of the snapshot replaces the result with a complete one.
     */
    public synchronized void addDamage(long volumeId, long sequence, long lbn, long pbn) {
        SnapshotResult r = snapshot(volumeId, sequence).orElse(new SnapshotResult(0, 0, 0, List.of()));
        if (r.damaged().stream().anyMatch(d -> d.pbn() == pbn && d.lbn() == lbn)) {
            return;
        }
        List<Damage> damaged = new ArrayList<>(r.damaged());
        damaged.add(new Damage(lbn, pbn));
        putSnapshot(volumeId, sequence, new SnapshotResult(r.verifiedAtMillis(), r.blocksChecked(), r.damagedCount() + 1, damaged));
    }

    /** A snapshot's last result, if it was ever verified. */
    public Optional<SnapshotResult> snapshot(long volumeId, long sequence) {
        byte[] v = db.get(cf, snapshotKey(volumeId, sequence));
        if (v == null) {
            return Optional.empty();
        }
        if (v.length < 21 || v[0] != VERSION || (v.length - 21) % 16 != 0) {
            throw new CorruptDataException("verify-ledger", db.path(), "volume " + volumeId + " snapshot " + sequence,
                    "result of " + v.length + " bytes, version " + (v.length == 0 ? -1 : v[0]) + "; expected version " + VERSION);
        }
        int listed = (v.length - 21) / 16;
        List<Damage> damaged = new ArrayList<>(listed);
        for (int i = 0; i < listed; i++) {
            damaged.add(new Damage(Bytes.getLong(v, 21 + i * 16), Bytes.getLong(v, 29 + i * 16)));
        }
        return Optional.of(new SnapshotResult(Bytes.getLong(v, 1), Bytes.getLong(v, 9), Bytes.getInt(v, 17) & 0xffffffffL, damaged));
    }
}
