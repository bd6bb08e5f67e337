package org.holdfast.server.api;

import java.util.List;
import org.holdfast.server.verify.DamageReport;
import java.time.Instant;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.catalog.VolumeSettings;
import org.holdfast.server.volumes.VolumeAdmin;

/**
 * A volume's details (docs/api.md, "Volume details"). {@code volumeBytes}: its logical size (of the
 * newest snapshot); {@code newestSnapshotBytes}, {@code retainedBytes}, {@code uniqueBytes}: stored
 * bytes of the distinct blocks its newest snapshot, any retained snapshot, and only this volume
 * references (null when not measured); {@code quotaBytes} null for none; {@code lastBackup} null
 * before the first recorded one. {@code damaged}: some snapshot references a bad block
 * ({@code damagedSnapshots} lists them with the damaged LBNs), as of each snapshot's last verify.
 */
public record VolumeDetailsView(String name, int blockSize, String domain, long createdAtMillis, String createdAt, long latestSequence,
                                long volumeBytes, int snapshotCount, String policy, Long quotaBytes, Long newestSnapshotBytes,
                                Long retainedBytes, Long uniqueBytes, LastBackup lastBackup, boolean damaged,
                                List<DamageReport.AffectedSnapshot> damagedSnapshots) {

    /** How the last backup ended: {@code result} is {@code success} (with the snapshot id) or {@code failure} (with the message). */
    public record LastBackup(String at, String result, String snapshotId, String message) {
        static LastBackup of(String volume, VolumeSettings.Outcome o) {
            return o == null ? null : new LastBackup(Instant.ofEpochMilli(o.atMillis()).toString(), o.success() ? "success" : "failure",
                    o.success() ? volume + "@" + o.sequence() : null, o.message());
        }
    }

    static VolumeDetailsView of(VolumeAdmin.Details d) {
        VolumeRecord v = d.volume();
        String name = v.name().name();
        return new VolumeDetailsView(name, v.blockSize(), v.domain(), v.createdAtMillis(), Instant.ofEpochMilli(v.createdAtMillis()).toString(),
                v.latestSequence(), v.volumeBytes(), d.snapshotCount(), d.policy(), d.quotaBytes(),
                d.usage() == null ? null : d.usage().newestBytes(), d.usage() == null ? null : d.usage().retainedBytes(),
                d.usage() == null ? null : d.usage().uniqueBytes(), LastBackup.of(name, d.lastBackup()), false, List.of());
    }

    /** The same details flagged with the volume's damage (snapshots referencing bad blocks, as of their last verify). */
    VolumeDetailsView withDamage(DamageReport.VolumeDamage d) {
        return new VolumeDetailsView(name, blockSize, domain, createdAtMillis, createdAt, latestSequence, volumeBytes, snapshotCount,
                policy, quotaBytes, newestSnapshotBytes, retainedBytes, uniqueBytes, lastBackup, d.damaged(), d.affectedSnapshots());
    }
}
