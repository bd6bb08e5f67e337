package org.holdfast.server.catalog;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CatalogPeek;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.holdfast.server.store.StoreException;
import org.rocksdb.ColumnFamilyHandle;

/**
 * A volume's sequence floor: a sequence that may have been handed out to a snapshot this catalog no
 * longer holds (lost with a catalog restore), so the volume's next snapshot takes a sequence above
 * it. Kept in {@code volume-settings} under kind 3 (docs/architecture.md):
 *
 * <pre>
 * key: u64 internalId, u8 kind 3    value: u8 version 1, u64 floor   (9 bytes)
 * </pre>
 *
 * No entry means floor 0. Raised only: by catalog-restore (the volume's newest sequence plus a gap)
 * and by an agent whose state names a newer snapshot than the volume's newest (clamped to
 * {@link #MAX_AGENT_AHEAD} past it, so a hostile agent cannot exhaust the sequence space).
 */
public final class SequenceFloor {
    static final byte KIND = 3;
    private static final byte VERSION = 1;
    static final int VALUE_BYTES = 9;
    /** How far past a volume's newest snapshot an agent's word can move the next sequence. */
    public static final long MAX_AGENT_AHEAD = 1_000_000;
    /** The gap catalog-restore leaves after each volume's newest sequence by default. */
    public static final long DEFAULT_RESTORE_GAP = 1_000;
    /** The largest gap catalog-restore takes. */
    public static final long MAX_RESTORE_GAP = 1_000_000_000;
    // a floor never goes past this, so every sequence + 1 stays positive whatever was raised
    private static final long CEILING = Long.MAX_VALUE / 2;
    // volumes per synced batch when catalog-restore raises them all
    private static final int BATCH_VOLUMES = 4_096;
    // entries read from a previous catalog's volumes and volume-settings at most (a few per volume)
    private static final int MAX_PREVIOUS_ENTRIES = 1 << 22;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public SequenceFloor(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(Column.VOLUME_SETTINGS);
    }

    /** The volume's floor, 0 if none recorded. */
    public long of(long internalId) {
        byte[] v = db.get(cf, VolumeSettings.key(internalId, KIND));
        return v == null ? 0 : decode(v, db.path(), internalId);
    }

    /** Adds floor {@code floor} for the volume to {@code batch} (the caller checked that it raises it). */
    void put(MetadataBatch batch, long internalId, long floor) {
        db.put(batch, cf, VolumeSettings.key(internalId, KIND), encode(floor));
    }

    /** The sequence after {@code parent} on a volume whose floor is {@code floor}: always above {@code parent}. */
    static long next(long parent, long floor) {
        return Math.max(parent, Math.min(floor, CEILING)) + 1; // the ceiling bounds the floor, never the parent
    }

    /**
     * What an agent's word moves the floor of a volume at {@code latest} to: {@code claimed}, but at most
     * {@link #MAX_AGENT_AHEAD} past {@code latest}, so repeated claims without commits move it no further.
     */
    static long clampClaim(long latest, long claimed) {
        long limit = Math.min(latest, CEILING) + MAX_AGENT_AHEAD;
        return Math.max(0, Math.min(claimed, limit));
    }

    /**
     * Raises every volume's floor to its newest sequence (or its floor, if higher) plus {@code gap},
     * durably (synced batches), for catalog-restore. Returns how many volumes it raised.
     */
    public static int raiseAll(Catalog catalog, long gap) {
        if (gap < 0 || gap > MAX_RESTORE_GAP) {
            throw new IllegalArgumentException("sequence gap " + gap + " is not in 0.." + MAX_RESTORE_GAP);
        }
        if (gap == 0) {
            return 0;
        }
        SequenceFloor floors = new SequenceFloor(catalog.db());
        List<VolumeRecord> volumes = catalog.volumes();
        int raised = 0;
        for (int from = 0; from < volumes.size(); from += BATCH_VOLUMES) {
            try (MetadataBatch batch = new MetadataBatch()) {
                for (VolumeRecord v : volumes.subList(from, Math.min(volumes.size(), from + BATCH_VOLUMES))) {
                    long base = Math.min(Math.max(v.latestSequence(), floors.of(v.internalId())), CEILING - gap);
                    floors.put(batch, v.internalId(), base + gap);
                    raised++;
                }
                catalog.db().write(batch, true);
            }
        }
        return raised;
    }

    /**
     * Raises the floor of every volume of {@code catalog} to the newest sequence (or floor) that the
     * catalog in {@code previous} (the one catalog-restore moved aside, opened read-only) records for a
     * volume of the same name, where that is higher, durably. Returns how many volumes it raised.
     *
     * @throws StoreException if {@code previous} cannot be read (damaged); nothing written then
     * @throws CorruptDataException if a value in it is not one this server writes; nothing written then
     */
    public static int raiseFrom(Catalog catalog, Path previous) {
        String path = previous.toString();
        Map<Long, Long> previousFloors = new HashMap<>();
        for (CatalogPeek.Entry e : CatalogPeek.entries(previous, Column.VOLUME_SETTINGS, MAX_PREVIOUS_ENTRIES)) {
            if (e.key().length == 9 && e.key()[8] == KIND) {
                previousFloors.put(Bytes.getLong(e.key(), 0), decode(e.value(), path, Bytes.getLong(e.key(), 0)));
            }
        }
        Map<String, Long> newest = new HashMap<>();
        for (CatalogPeek.Entry e : CatalogPeek.entries(previous, Column.VOLUMES, MAX_PREVIOUS_ENTRIES)) {
            VolumeRecord v;
            try {
                v = CatalogKeys.volume(e.key(), e.value(), path);
            } catch (IllegalArgumentException x) { // a key no volume name makes: the damage catalog-restore reports, not a failure
                throw new CorruptDataException("catalog.volumes", path, new String(e.key(), StandardCharsets.UTF_8),
                        x.getMessage());
            }
            newest.put(v.name().name(), Math.max(v.latestSequence(), previousFloors.getOrDefault(v.internalId(), 0L)));
        }
        SequenceFloor floors = new SequenceFloor(catalog.db());
        int raised = 0;
        try (MetadataBatch batch = new MetadataBatch()) {
            for (VolumeRecord v : catalog.volumes()) {
                long known = Math.min(newest.getOrDefault(v.name().name(), 0L), CEILING);
                if (known > Math.max(v.latestSequence(), floors.of(v.internalId()))) {
                    floors.put(batch, v.internalId(), known);
                    raised++;
                }
            }
            catalog.db().write(batch, true);
        }
        return raised;
    }

    static byte[] encode(long floor) {
        byte[] v = new byte[VALUE_BYTES];
        v[0] = VERSION;
        Bytes.putLong(v, 1, floor);
        return v;
    }

    static long decode(byte[] v, String path, long internalId) {
        if (v.length != VALUE_BYTES || v[0] != VERSION || Bytes.getLong(v, 1) < 0) {
            throw new CorruptDataException("catalog.volume-settings", path, "volume " + internalId,
                    "sequence floor value of " + v.length + " bytes, version " + (v.length > 0 ? v[0] : -1)
                    + " (this server reads version 1 of 9 bytes with a non-negative floor)");
        }
        return Bytes.getLong(v, 1);
    }
}
