package org.holdfast.server.ingest;

import java.lang.System.Logger.Level;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.FullReason;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.DamageReport;

/**
 * The mode BACKUP_READY tells the agent, and why a full one: incremental only if the agent's base
 * is the volume's newest snapshot (same sequence and, when both are known, same identity) and that
 * snapshot references no damaged block; an incremental backup resends no unchanged LBN, so a bad
 * block the parent carries would stay bad.
 */
record BackupModeChoice(BackupMode mode, FullReason fullReason) {
    // the session's logger, as before the split: operators filter on it
    private static final System.Logger LOG = System.getLogger(BackupSession.class.getName());

    /** The choice for a backup of {@code volume} ({@code existing}: null if new) whose agent's base is {@code baseSequence}, {@code baseSnapshotId}. */
    static BackupModeChoice of(IngestServices services, VolumeRecord existing, VolumeId volume, long baseSequence, long baseSnapshotId) {
        long parentSequence = existing == null ? 0 : existing.latestSequence();
        boolean sameSnapshot = baseSequence == parentSequence && sameIdentity(services, existing, volume, baseSnapshotId);
        long damagedInParent = existing == null || !sameSnapshot ? 0 : damagedBlocks(services, existing);
        BackupMode mode = sameSnapshot && damagedInParent == 0 ? BackupMode.INCREMENTAL : BackupMode.FULL;
        FullReason reason = mode == BackupMode.INCREMENTAL ? FullReason.UNSTATED
                : baseSequence != parentSequence ? FullReason.BASE_NOT_NEWEST
                : !sameSnapshot ? FullReason.IDENTITY_MISMATCH
                : FullReason.DAMAGED_BLOCKS;
        if (damagedInParent > 0) {
            LOG.log(Level.WARNING, "backup of volume " + volume + ": its latest snapshot " + volume + "@" + parentSequence
                    + " references " + damagedInParent + " damaged blocks; asking the agent for a full backup, which re-reads"
                    + " the volume and repairs them");
        }
        return new BackupModeChoice(mode, reason);
    }

    /**
     * False if the agent's base (which has the parent's sequence) is provably another snapshot: both
     * identities known and different. That happens after a catalog restore, when the sequence was
     * handed out again, and an incremental backup against it would be silently wrong. An unknown
     * identity on either side (0: an older agent, a snapshot stored before identities) trusts the
     * sequence, as before, so an upgrade does not force a full backup of every volume.
     */
    private static boolean sameIdentity(IngestServices services, VolumeRecord existing, VolumeId volume, long baseSnapshotId) {
        if (existing == null || baseSnapshotId == 0 || existing.latestSequence() == 0) {
            return true;
        }
        long parentId = services.catalog().snapshot(existing, existing.latestSequence()).map(SnapshotRecord::snapshotId).orElse(0L);
        if (parentId == 0 || parentId == baseSnapshotId) {
            return true;
        }
        LOG.log(Level.INFO, "backup of volume " + volume + ": full, because the agent's base snapshot " + volume + "@"
                + existing.latestSequence() + " has identity " + Long.toHexString(baseSnapshotId) + " but the server's "
                + volume + "@" + existing.latestSequence() + " is " + Long.toHexString(parentId)
                + " (identity mismatch: the sequence was handed out again, as after a catalog restore)");
        return false;
    }

    /** LBNs of the volume's newest snapshot known to map to a bad block; 0 (and a warning) if the verify records cannot be read. */
    private static long damagedBlocks(IngestServices services, VolumeRecord v) {
        if (services.dataStore().badBlocks().isEmpty()) {
            return 0; // the usual case, free
        }
        try {
            return new DamageReport(services.catalog(), services.dataStore().badBlocks(), new VerifyLedger(services.catalog().db()))
                    .referencedBy(v, v.latestSequence());
        } catch (CorruptDataException e) {
            // a damaged verify record must not stop backups; the next verify pass rewrites it
            LOG.log(Level.WARNING, "backup of volume " + v.name() + ": cannot tell whether its latest snapshot references damaged"
                    + " blocks (" + e.getMessage() + "); deciding incremental or full without it");
            return 0;
        }
    }
}
