package org.holdfast.server.api;

import java.time.Instant;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.catalog.VolumeSettings;
import org.holdfast.server.volumes.VolumeAdmin;

/**
 * A volume's details (docs/api.md, "Volume details"). {@code volumeBytes}: its logical size (of the
 * newest snapshot); {@code newestSnapshotBytes}, {@code retainedBytes}, {@code uniqueBytes}: stored
 * bytes of the distinct blocks its newest snapshot, any retained snapshot, and only this volume
 * references (null when not measured); {@code quotaBytes} null for none; {@code lastBackup} null
 * before the first recorded one.
 */
public record VolumeDetailsView(String name, int blockSize, String domain, long createdAtMillis, String createdAt, long latestSequence,
                                long volumeBytes, int snapshotCount, String policy, Long quotaBytes, Long newestSnapshotBytes,
                                Long retainedBytes, Long uniqueBytes, LastBackup lastBackup) {

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
                d.usage() == null ? null : d.usage().uniqueBytes(), LastBackup.of(name, d.lastBackup()));
    }
}
