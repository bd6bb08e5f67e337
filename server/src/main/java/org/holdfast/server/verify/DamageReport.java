package org.holdfast.server.verify;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.VerifyLedger;

/**
 * Which volumes and snapshots reference bad blocks, from each snapshot's last verify result
 * filtered by the bad-block registry as it is now: a block repaired since drops out at once, a
 * block found bad since (by a restore or compaction) shows after the next verify of the snapshot.
 */
public final class DamageReport {
    /** One damaged block of a snapshot. */
    public record DamagedBlock(long lbn, long pbn, String file, String problem) {
    }

    /**
     * A snapshot's verification as the API shows it: {@code status} is {@code unverified},
     * {@code ok} or {@code damaged}; {@code damagedBlocks} lists the blocks still bad,
     * {@code repairedBlocks} counts those found bad by the last verify and repaired since.
     */
    public record SnapshotVerification(String status, String lastVerified, long blocksChecked, long damagedCount,
                                       List<DamagedBlock> damagedBlocks, long repairedBlocks) {
        static final SnapshotVerification UNVERIFIED = new SnapshotVerification("unverified", null, 0, 0, List.of(), 0);

        public boolean damaged() {
            return "damaged".equals(status);
        }
    }

    /** A snapshot that references bad blocks. */
    public record AffectedSnapshot(String snapshot, long damagedCount, List<DamagedBlock> damagedBlocks) {
    }

    /** A volume's damage: flagged if any of its snapshots references a bad block. */
    public record VolumeDamage(String volume, boolean damaged, List<AffectedSnapshot> affectedSnapshots) {
    }

    private final Catalog catalog;
    private final BadBlocks bad;
    private final VerifyLedger ledger;

    public DamageReport(Catalog catalog, BadBlocks bad, VerifyLedger ledger) {
        this.catalog = catalog;
        this.bad = bad;
        this.ledger = ledger;
    }

    /** The verification of one snapshot. */
    public SnapshotVerification snapshot(VolumeRecord v, SnapshotRecord s) {
        Optional<VerifyLedger.SnapshotResult> r = ledger.snapshot(v.internalId(), s.sequence());
        if (r.isEmpty()) {
            return SnapshotVerification.UNVERIFIED;
        }
        VerifyLedger.SnapshotResult res = r.get();
        List<DamagedBlock> still = new ArrayList<>();
        long repaired = 0;
        for (VerifyLedger.Damage d : res.damaged()) {
            Optional<BadBlocks.BadBlock> b = bad.get(d.pbn());
            if (b.isPresent()) {
                still.add(new DamagedBlock(d.lbn(), d.pbn(), b.get().file(), b.get().problem()));
            } else {
                repaired++;
            }
        }
        // blocks beyond the listed ones are counted only; they are still damaged unless every listed one was repaired
        long unlisted = res.damagedCount() - res.damaged().size();
        long count = still.size() + (still.isEmpty() ? 0 : Math.max(0, unlisted));
        // a result with no verify time holds only damage a restore met
        String last = res.verifiedAtMillis() == 0 ? null : Instant.ofEpochMilli(res.verifiedAtMillis()).toString();
        String status = count > 0 ? "damaged" : res.verifiedAtMillis() == 0 ? "unverified" : "ok";
        return new SnapshotVerification(status, last,
                res.blocksChecked(), count, List.copyOf(still), repaired);
    }

    /** The damage of one volume. */
    public VolumeDamage volume(VolumeRecord v) {
        List<AffectedSnapshot> affected = new ArrayList<>();
        if (!bad.isEmpty()) {
            for (SnapshotRecord s : catalog.snapshots(v)) {
                SnapshotVerification sv = snapshot(v, s);
                if (sv.damaged()) {
                    affected.add(new AffectedSnapshot(s.id().toString(), sv.damagedCount(), sv.damagedBlocks()));
                }
            }
        }
        return new VolumeDamage(v.name().name(), !affected.isEmpty(), List.copyOf(affected));
    }

    /**
     * How many LBNs of snapshot {@code sequence} of {@code v} map to a block that is bad now, among the
     * damaged blocks verify and restore recorded for any snapshot of the volume (the snapshot itself
     * may be newer than the last verify: an incremental backup carries a bad block over unchanged).
     * Costs nothing while no block is bad; else one read per snapshot and one map lookup per listed
     * damaged block, however large the volume. A block marked bad only by compaction or fsck is
     * counted once a verify of the volume attributed it.
     */
    public long referencedBy(VolumeRecord v, long sequence) {
        if (bad.isEmpty() || sequence == 0) {
            return 0;
        }
        Set<VerifyLedger.Damage> checked = new HashSet<>();
        long count = 0;
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            for (SnapshotRecord s : catalog.snapshots(v)) {
                Optional<VerifyLedger.SnapshotResult> r = ledger.snapshot(v.internalId(), s.sequence());
                if (r.isEmpty()) {
                    continue;
                }
                for (VerifyLedger.Damage d : r.get().damaged()) {
                    if (bad.isBad(d.pbn()) && checked.add(d) && c.seekAtOrBefore(d.lbn(), sequence) && c.pbn() == d.pbn()) {
                        count++;
                    }
                }
            }
        }
        return count;
    }

    /** Every flagged volume, in name order (none, cheaply, while no block is bad). */
    public List<VolumeDamage> damagedVolumes() {
        List<VolumeDamage> out = new ArrayList<>();
        if (bad.isEmpty()) {
            return out;
        }
        for (VolumeRecord v : catalog.volumes()) {
            VolumeDamage d = volume(v);
            if (d.damaged()) {
                out.add(d);
            }
        }
        return out;
    }

    /** The bad-block registry this report reads. */
    public BadBlocks badBlocks() {
        return bad;
    }
}
