package org.holdfast.server.verify;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.VerifyLedger;

/**
 * Records in the verify ledger which snapshots reference blocks marked bad without a verify pass
 * (the blocks a catalog restore found gone), so their volumes are flagged at once and the next
 * backup of each is turned full and repairs them ({@link DamageReport#referencedBy}).
 */
public final class DamageAttribution {
    /** What was recorded: the damaged snapshots (as {@code volume@sequence}) and the damaged LBNs over all of them. */
    public record Result(List<String> damagedSnapshots, long damagedLbns) {
    }

    private DamageAttribution() {
    }

    /**
     * Reads the block map of every snapshot once and records, for each that references a bad block,
     * a result with no verify time listing them (what {@link VerifyLedger#addDamage} records for a
     * restore that met one); snapshots without bad blocks keep their result. Costs one catalog scan.
     */
    public static Result record(Catalog catalog, BadBlocks bad, VerifyLedger ledger) {
        List<String> damagedSnapshots = new ArrayList<>();
        long damagedLbns = 0;
        if (bad.isEmpty()) {
            return new Result(damagedSnapshots, 0);
        }
        for (VolumeRecord v : catalog.volumes()) {
            for (SnapshotRecord s : catalog.snapshots(v)) {
                List<VerifyLedger.Damage> damaged = new ArrayList<>();
                long count = 0;
                try (MapCursor c = catalog.mapCursor(v.internalId())) {
                    c.startScan(s.sequence(), 0, s.blockCount());
                    while (c.nextMapped()) {
                        if (c.pbn() == 0) {
                            continue;
                        }
                        if (bad.isBad(c.pbn())) {
                            count++;
                            if (damaged.size() < VerifyLedger.MAX_DAMAGED_LISTED) {
                                damaged.add(new VerifyLedger.Damage(c.lbn(), c.pbn()));
                            }
                        }
                    }
                }
                if (count > 0) {
                    ledger.putSnapshot(v.internalId(), s.sequence(), new VerifyLedger.SnapshotResult(0, 0, count, damaged));
                    damagedSnapshots.add(s.id().toString());
                    damagedLbns += count;
                }
            }
        }
        return new Result(damagedSnapshots, damagedLbns);
    }
}
