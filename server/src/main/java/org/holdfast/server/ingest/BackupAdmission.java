package org.holdfast.server.ingest;

import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.VolumeRecord;

/**
 * The operator's say over backups of a volume: whether one may begin (the volume's quota), and how
 * each one ended (kept as the volume's last backup result). Called by the ingest on its own threads;
 * implementations must be thread-safe and must not block for long.
 */
public interface BackupAdmission {

    /**
     * Called at BACKUP_BEGIN under the volume's lock, before anything is stored.
     *
     * @param existing    the volume, or null if the backup would create it
     * @param volumeBytes the size of the volume the backup describes
     * @throws org.holdfast.common.protocol.ProtocolException to refuse (QUOTA_EXCEEDED), with a message that says what to do
     */
    void admit(VolumeId volume, VolumeRecord existing, long volumeBytes);

    /** A backup of {@code volume} committed snapshot {@code sequence}. */
    void committed(VolumeId volume, long sequence, long atMillis);

    /**
     * A backup of {@code volume} was refused at BACKUP_BEGIN or ended without a snapshot;
     * {@code message} says why. Ignored for a volume that does not exist.
     */
    void failed(VolumeId volume, String message, long atMillis);

    /** Admits everything and records nothing (tests and tools). */
    BackupAdmission NONE = new BackupAdmission() {
        @Override
        public void admit(VolumeId volume, VolumeRecord existing, long volumeBytes) {
        }

        @Override
        public void committed(VolumeId volume, long sequence, long atMillis) {
        }

        @Override
        public void failed(VolumeId volume, String message, long atMillis) {
        }
    };
}
