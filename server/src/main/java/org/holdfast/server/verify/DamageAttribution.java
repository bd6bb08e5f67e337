package org.holdfast.server.verify;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.VerifyLedger;

/**
 * Records in the verify ledger which snapshots reference blocks marked bad without a verify pass
 * (the blocks a catalog restore found gone, or a read found in a missing data log), so their
 * volumes are flagged at once and the next backup of each is turned full and repairs them
 * ({@link DamageReport#referencedBy}).
 */
public final class DamageAttribution {
    /** What was recorded: the damaged snapshots (as {@code volume@sequence}) and the damaged LBNs over all of them. */
    public record Result(List<String> damagedSnapshots, long damagedLbns) {
    }

    private DamageAttribution() {
    }

    /**
     * Flags the snapshots that use a data log as soon as a read of {@code store} finds the log missing
     * and marks its blocks bad ({@link #record}, one catalog scan per missing log). It runs before the
     * read fails: the restore that met the log then reports an already flagged snapshot.
     */
    public static void onMissingLogs(Catalog catalog, DataStore store, VerifyLedger ledger) {
        store.onLogMissing(logId -> record(catalog, store.badBlocks(), ledger));
    }

    /**
     * Reads the block map of every snapshot once and records, for each that references a bad block,
     * a result listing them (what {@link VerifyLedger#addDamage} records for a restore that met one:
     * the time and count of its last verify pass kept, none if it was never verified); snapshots
     * without bad blocks keep their result. Costs one catalog scan.
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
                    VerifyLedger.SnapshotResult before = ledger.snapshot(v.internalId(), s.sequence()).orElse(null);
                    ledger.putSnapshot(v.internalId(), s.sequence(), new VerifyLedger.SnapshotResult(
                            before == null ? 0 : before.verifiedAtMillis(), before == null ? 0 : before.blocksChecked(), count, damaged));
                    damagedSnapshots.add(s.id().toString());
                    damagedLbns += count;
                }
            }
        }
        return new Result(damagedSnapshots, damagedLbns);
    }
}
