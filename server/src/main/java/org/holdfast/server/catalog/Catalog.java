package org.holdfast.server.catalog;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.holdfast.server.store.StoreException;
import org.rocksdb.ColumnFamilyHandle;

/**
 * Read access to volumes, snapshots and the versioned map, and the batch primitives that retention
 * and GC use to delete them. Writes of new snapshots go through {@link SnapshotCommit} only.
 * Thread-safe (RocksDB is).
 */
public final class Catalog {
    private final MetadataDb db;
    private final ColumnFamilyHandle volumes;
    private final ColumnFamilyHandle snapshots;
    private final ColumnFamilyHandle map;

    public Catalog(MetadataDb db) {
        this.db = db;
        this.volumes = db.handle(Column.VOLUMES);
        this.snapshots = db.handle(Column.SNAPSHOTS);
        this.map = db.handle(Column.MAP);
        checkVersion();
    }

    private void checkVersion() {
        long v = db.metaLong(FormatVersions.META_CATALOG_VERSION, -1);
        if (v == -1) {
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, FormatVersions.META_CATALOG_VERSION, FormatVersions.CATALOG_VERSION);
                db.write(b, true);
            }
        } else if (v != FormatVersions.CATALOG_VERSION) {
            throw new StoreException("catalog", db.path(), FormatVersions.META_CATALOG_VERSION,
                    "catalog format version " + v + " is not supported (this server reads " + FormatVersions.CATALOG_VERSION + ")", null);
        }
    }

    public MetadataDb db() {
        return db;
    }

    public Optional<VolumeRecord> volume(VolumeId name) {
        byte[] key = CatalogKeys.volumeKey(name);
        byte[] v = db.get(volumes, key);
        return v == null ? Optional.empty() : Optional.of(CatalogKeys.volume(key, v, db.path()));
    }

    /** @throws UnknownVolumeException if absent */
    public VolumeRecord requireVolume(VolumeId name) {
        return volume(name).orElseThrow(() -> new UnknownVolumeException(name.name()));
    }

    /** Every volume, in name order. */
    public List<VolumeRecord> volumes() {
        List<VolumeRecord> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(volumes)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                out.add(CatalogKeys.volume(it.key(), it.value(), db.path()));
            }
        }
        return out;
    }

    /** Every retained snapshot of the volume, oldest first. */
    public List<SnapshotRecord> snapshots(VolumeRecord volume) {
        List<SnapshotRecord> out = new ArrayList<>();
        byte[] k = new byte[16];
        try (CheckedIterator it = db.iterator(snapshots)) {
            for (it.seek(CatalogKeys.snapshotKey(volume.internalId(), 0)); it.isValid(); it.next()) {
                it.key(k);
                if (Bytes.getLong(k, 0) != volume.internalId()) {
                    break;
                }
                out.add(CatalogKeys.snapshot(volume.name(), Bytes.getLong(k, 8), it.value(), db.path()));
            }
        }
        return out;
    }

    /** @throws UnknownVolumeException if the volume does not exist */
    public List<SnapshotRecord> snapshots(VolumeId volume) {
        return snapshots(requireVolume(volume));
    }

    public Optional<SnapshotRecord> snapshot(VolumeRecord volume, long sequence) {
        byte[] v = db.get(snapshots, CatalogKeys.snapshotKey(volume.internalId(), sequence));
        return v == null ? Optional.empty() : Optional.of(CatalogKeys.snapshot(volume.name(), sequence, v, db.path()));
    }

    /** @throws UnknownVolumeException or {@link UnknownSnapshotException} */
    public SnapshotRecord requireSnapshot(VolumeId volume, long sequence) {
        VolumeRecord v = requireVolume(volume);
        return snapshot(v, sequence).orElseThrow(() -> new UnknownSnapshotException(volume.name(), sequence));
    }

    /** A cursor over one volume's versioned map; the caller closes it. */
    public MapCursor mapCursor(long volumeInternalId) {
        return new MapCursor(db.iterator(map), volumeInternalId, db.path());
    }

    /**
     * Visits every map entry of a volume (all versions) in (LBN, newest first) order; for GC and
     * fsck. Return false from the visitor to stop.
     */
    public void forEachMapEntry(long volumeInternalId, MapEntryVisitor visitor) {
        byte[] k = new byte[CatalogKeys.MAP_KEY_BYTES];
        byte[] v = new byte[8];
        try (CheckedIterator it = db.iterator(map)) {
            for (it.seek(CatalogKeys.mapKey(volumeInternalId, 0, Long.MAX_VALUE)); it.isValid(); it.next()) {
                it.key(k);
                if (Bytes.getLong(k, 0) != volumeInternalId) {
                    break;
                }
                it.value(v);
                if (!visitor.visit(Bytes.getLong(k, 8), ~Bytes.getLong(k, 16), Bytes.getLong(v, 0))) {
                    return;
                }
            }
        }
    }

    /** Receives one map entry. */
    @FunctionalInterface
    public interface MapEntryVisitor {
        /** Return false to stop. */
        boolean visit(long lbn, long birthSequence, long pbn);
    }

    /** Adds the removal of a snapshot record to {@code batch} (its map entries are separate). */
    public void deleteSnapshot(MetadataBatch batch, VolumeRecord volume, long sequence) {
        db.delete(batch, snapshots, CatalogKeys.snapshotKey(volume.internalId(), sequence));
    }

    /** Adds the removal of a volume record to {@code batch} (its snapshots and map entries are separate; used by GC). */
    public void deleteVolume(MetadataBatch batch, VolumeRecord volume) {
        db.delete(batch, volumes, CatalogKeys.volumeKey(volume.name()));
    }

    /** Adds the removal of one map entry to {@code batch}. */
    public void deleteMapEntry(MetadataBatch batch, long volumeInternalId, long lbn, long birthSequence) {
        db.delete(batch, map, CatalogKeys.mapKey(volumeInternalId, lbn, birthSequence));
    }

    /** Writes a batch built with the methods above atomically and durably. */
    public void write(MetadataBatch batch) {
        db.write(batch, true);
    }

    // used by SnapshotCommit
    void putMapEntry(MetadataBatch batch, long volumeInternalId, long lbn, long sequence, long pbn) {
        db.put(batch, map, CatalogKeys.mapKey(volumeInternalId, lbn, sequence), CatalogKeys.pbnValue(pbn));
    }

    void putSnapshot(MetadataBatch batch, long volumeInternalId, SnapshotRecord s) {
        db.put(batch, snapshots, CatalogKeys.snapshotKey(volumeInternalId, s.sequence()), CatalogKeys.snapshotValue(s));
    }

    void putVolume(MetadataBatch batch, VolumeRecord v) {
        db.put(batch, volumes, CatalogKeys.volumeKey(v.name()), CatalogKeys.volumeValue(v));
    }
}
