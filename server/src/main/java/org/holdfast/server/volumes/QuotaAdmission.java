package org.holdfast.server.volumes;

import java.util.Locale;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.catalog.VolumeSettings;
import org.holdfast.server.ingest.BackupAdmission;

/**
 * The ingest's admission backed by the volume settings: refuses a backup whose volume is larger than
 * the quota (QUOTA_EXCEEDED, before anything is stored) and keeps each volume's last backup result.
 * A volume the backup would create has no quota yet (create it over REST first to give it one).
 */
public final class QuotaAdmission implements BackupAdmission {
    private final Catalog catalog;
    private final VolumeSettings settings;

    public QuotaAdmission(Catalog catalog, VolumeSettings settings) {
        this.catalog = catalog;
        this.settings = settings;
    }

    @Override
    public void admit(VolumeId volume, VolumeRecord existing, long volumeBytes) {
        if (existing == null) {
            return;
        }
        Long quota = settings.quota(existing.internalId()).orElse(null);
        if (quota != null && volumeBytes > quota) {
            throw new ProtocolException(ErrorCode.QUOTA_EXCEEDED, refusal(volume, volumeBytes, quota));
        }
    }

    /** The message an agent prints: which volume, its size, the quota, and what to do. */
    static String refusal(VolumeId volume, long volumeBytes, long quota) {
        return "volume '" + volume + "' is " + human(volumeBytes) + " (" + volumeBytes + " bytes), over its quota of " + human(quota)
                + " (" + quota + " bytes); nothing was stored. Ask an operator to raise the quota (PATCH /api/v1/volumes/" + volume
                + " with {\"quotaBytes\": " + volumeBytes + "} or more) or back up a smaller volume";
    }

    @Override
    public void committed(VolumeId volume, long sequence, long atMillis) {
        catalog.volume(volume).ifPresent(v -> settings.recordOutcome(v.internalId(),
                new VolumeSettings.Outcome(atMillis, true, sequence, null)));
    }

    @Override
    public void failed(VolumeId volume, String message, long atMillis) {
        catalog.volume(volume).ifPresent(v -> settings.recordOutcome(v.internalId(),
                new VolumeSettings.Outcome(atMillis, false, 0, message)));
    }

    /** 1.5 GiB, 512 B: binary units, one decimal. */
    static String human(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
