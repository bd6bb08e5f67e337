package org.holdfast.server.volumes;

import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.catalog.VolumeSettings;
import org.holdfast.server.gc.GcConflictException;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;

/**
 * Volumes as the operator manages them: create one before its first backup, list and read them
 * with their settings and usage, change their policy and quota. Deletion stays with
 * {@link GcService#deleteVolume}; {@link #forget} then drops the settings.
 */
public final class VolumeAdmin {
    /** Most volumes one list call returns. */
    public static final int MAX_LIMIT = 1000;
    /** Volumes a list call returns unless told otherwise. */
    public static final int DEFAULT_LIMIT = 100;

    private final Catalog catalog;
    private final SnapshotCommit commit;
    private final VolumeSettings settings;
    private final GcService gc;
    private final VolumeGate gate;
    private final VolumeUsage usage;

    public VolumeAdmin(Catalog catalog, SnapshotCommit commit, VolumeSettings settings, GcService gc, VolumeGate gate, VolumeUsage usage) {
        this.catalog = catalog;
        this.commit = commit;
        this.settings = settings;
        this.gc = gc;
        this.gate = gate;
        this.usage = usage;
    }

    /** What a create call asks for; {@code policy}, {@code domain} and {@code quotaBytes} may be null (defaults, none). */
    public record CreateRequest(String name, int blockSize, String policy, String domain, Long quotaBytes) {
    }

    /** One page of a list: the volumes and how many matched in all. */
    public record Page(List<VolumeRecord> volumes, int total, int offset, int limit) {
    }

    /** A volume with what the operator set on it and how its backups went; {@code usage} only when asked for. */
    public record Details(VolumeRecord volume, int snapshotCount, String policy, Long quotaBytes, VolumeSettings.Outcome lastBackup,
                          VolumeUsage.Usage usage) {
    }

    /**
     * Creates an empty volume. The policy is checked before anything is written; the volume is
     * kept from backups while it is set up, so the first backup sees its quota and policy.
     *
     * @throws IllegalArgumentException for an invalid name, block size, domain, policy or quota
     * @throws org.holdfast.server.catalog.VolumeExistsException if it exists
     * @throws GcConflictException if a backup of that name is running (it would create the volume itself)
     */
    public VolumeRecord create(CreateRequest r) {
        if (r.name() == null || !VolumeId.isValid(r.name())) {
            throw new IllegalArgumentException("invalid volume name '" + r.name() + "': use 1 to " + VolumeId.MAX_LENGTH
                    + " letters, digits, '.', '_' or '-', not starting with '.'");
        }
        if (r.quotaBytes() != null && r.quotaBytes() < 0) {
            throw new IllegalArgumentException("quotaBytes must be 0 or more, got " + r.quotaBytes());
        }
        if (r.domain() != null && !VolumeRecord.isValidDomain(r.domain())) {
            throw new IllegalArgumentException("invalid dedup domain '" + r.domain() + "': use 1 to " + VolumeRecord.MAX_DOMAIN_LENGTH
                    + " letters, digits, '.', '_' or '-'");
        }
        if (r.policy() != null) {
            RetentionPolicy.parse(r.policy()); // refuse a bad policy before the volume exists
        }
        VolumeId name = new VolumeId(r.name());
        if (!gate.tryExclude(name.name())) {
            throw new GcConflictException("volume '" + name + "' has a backup (which creates it) or a deletion in progress; try again"
                    + " when it has finished");
        }
        try {
            VolumeRecord v = commit.createVolume(name, r.blockSize(), r.domain(), (batch, created) -> {
                if (r.quotaBytes() != null) {
                    settings.putQuota(batch, created.internalId(), r.quotaBytes());
                }
            });
            if (r.policy() != null) {
                gc.setPolicy(name, r.policy());
            }
            return v;
        } finally {
            gate.release(name.name());
        }
    }

    /**
     * The volumes {@code visible} lets through whose name contains {@code nameFilter} (any case;
     * null for all), in name order, {@code limit} from {@code offset}.
     */
    public Page list(Predicate<String> visible, String nameFilter, int offset, int limit) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be 0 or more, got " + offset);
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", got " + limit);
        }
        String f = nameFilter == null ? null : nameFilter.toLowerCase(Locale.ROOT);
        List<VolumeRecord> all = catalog.volumes().stream().filter(v -> visible.test(v.name().name()))
                .filter(v -> !gc.deleting(v.internalId())) // a deletion waiting for space: gone for the API
                .filter(v -> f == null || v.name().name().toLowerCase(Locale.ROOT).contains(f)).toList();
        int from = (int) Math.min(offset, all.size());
        int to = (int) Math.min((long) from + limit, all.size());
        return new Page(all.subList(from, to), all.size(), offset, limit);
    }

    /** The volume's details; with {@code measure}, also its usage (a map scan, see {@link VolumeUsage}). */
    public Details details(VolumeId name, boolean measure) {
        VolumeRecord v = live(name);
        List<SnapshotRecord> snapshots = catalog.snapshots(v);
        return new Details(v, snapshots.size(), gc.policy(name), settings.quota(v.internalId()).orElse(null),
                settings.lastOutcome(v.internalId()).orElse(null), measure ? usage.of(v) : null);
    }

    /**
     * Changes what is given: the policy (null: unchanged) and the quota ({@code setQuota} false:
     * unchanged; {@code quotaBytes} null: none). The policy is checked before anything changes.
     */
    public void update(VolumeId name, String policy, boolean setQuota, Long quotaBytes) {
        VolumeRecord v = live(name);
        if (setQuota && quotaBytes != null && quotaBytes < 0) {
            throw new IllegalArgumentException("quotaBytes must be 0 or more, got " + quotaBytes);
        }
        if (policy != null) {
            RetentionPolicy.parse(policy);
            gc.namedPolicies().assignText(name, policy); // text replaces a named assignment
        }
        if (setQuota) {
            settings.setQuota(v.internalId(), quotaBytes);
        }
    }

    /** The volume, unless it is unknown or its deletion is pending (then {@code UnknownVolumeException}). */
    private VolumeRecord live(VolumeId name) {
        VolumeRecord v = catalog.requireVolume(name);
        if (gc.deleting(v.internalId())) {
            throw new org.holdfast.server.catalog.UnknownVolumeException(name.name());
        }
        return v;
    }

    /** Drops the settings and cached usage of a volume that was deleted (internal ids are never reused). */
    public void forget(long internalId) {
        settings.forget(internalId);
        usage.forget(internalId);
    }
}
