package org.holdfast.server.ingest;

import java.lang.System.Logger.Level;
import org.holdfast.common.id.VolumeId;

/**
 * What a backup's end leaves on record besides its snapshot: the agent's record (the observer),
 * the volume's last backup result (the admission) and, for a refused BACKUP_BEGIN, the audit log.
 * A failure to record is logged and never hides the backup's own result. Lane only.
 */
final class BackupOutcomes {
    private static final System.Logger LOG = System.getLogger(BackupOutcomes.class.getName());

    private final IngestServer server;
    private final AgentAccess access;

    BackupOutcomes(IngestServer server, AgentAccess access) {
        this.server = server;
        this.access = access;
    }

    /** Tells the observer a backup of {@code volume} ended, committed ({@code ok}) or not, after {@code bytes} of payloads. */
    void ended(VolumeId volume, boolean ok, String detail, long bytes) {
        var principal = access.principal();
        server.observe(o -> o.backupEnded(principal, volume.name(), ok, detail, bytes));
    }

    /** Records snapshot {@code sequence} as the volume's last backup result. */
    void committed(VolumeId volume, long sequence) {
        try {
            server.services().admission().committed(volume, sequence, server.services().clock().millis());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot record the backup result of volume " + volume + ": " + e, e);
        }
    }

    /** Records {@code message} as the volume's last backup result: it ended without a commit. */
    void failed(VolumeId volume, String message) {
        try {
            server.services().admission().failed(volume, message, server.services().clock().millis());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot record the backup result of volume " + volume + ": " + e, e);
        }
    }

    /**
     * Records a BACKUP_BEGIN refused after authorization (quota, limit, block size, busy, full disk)
     * as a backup that ended without a commit: in the agent's record (GET /api/v1/agents), in the
     * audit log ({@code backup.begin}, result {@code failed}) and, if {@code volumeResult}, as the
     * volume's last backup.
     */
    void refusedAtBegin(VolumeId volume, RuntimeException e, boolean volumeResult) {
        String reason = ErrorMapping.codeOf(e) + ": " + ErrorMapping.messageOf(e);
        String why = "refused at BACKUP_BEGIN: " + reason;
        ended(volume, false, why, 0);
        access.audit("backup.begin", "volume:" + volume, "failed", reason);
        if (volumeResult) {
            failed(volume, why);
        }
    }
}
