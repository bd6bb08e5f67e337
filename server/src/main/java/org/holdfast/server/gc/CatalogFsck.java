package org.holdfast.server.gc;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.holdfast.gc.check.FsckBlockStore;
import org.holdfast.gc.check.FsckCatalog;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.StoredBlock;

/**
 * fsck's view of the real catalog and data store: every retained snapshot with its expiry and hold
 * state, its PBNs read from the versioned map, and each block read back with its checksum verified.
 */
final class CatalogFsck implements FsckCatalog, FsckBlockStore {
    private final Catalog catalog;
    private final DataStore store;
    private final GcRecords records;
    private final Map<String, VolumeRecord> byName = new HashMap<>();
    private final Map<String, Long> blockCounts = new HashMap<>();
    private final StoredBlock scratch = new StoredBlock();

    CatalogFsck(Catalog catalog, DataStore store, GcRecords records) {
        this.catalog = catalog;
        this.store = store;
        this.records = records;
    }

    /** How many snapshots {@link #forEachRetainedSnapshot} will visit (for progress; reads the snapshot records once more). */
    long retainedSnapshots() {
        long n = 0;
        for (VolumeRecord v : catalog.volumes()) {
            n += catalog.snapshots(v).size();
        }
        return n;
    }

    @Override
    public void forEachRetainedSnapshot(Consumer<RetainedSnapshot> visitor) {
        for (VolumeRecord v : catalog.volumes()) {
            byName.put(v.name().name(), v);
            Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
            for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                gc.put(s.sequence(), s);
            }
            for (SnapshotRecord s : catalog.snapshots(v)) {
                GcRecords.SnapshotGc sg = gc.get(s.sequence());
                long expiry = sg == null ? Long.MAX_VALUE : sg.expiry();
                boolean held = sg != null && (sg.held() || sg.keepLastPinned());
                blockCounts.put(v.name().name() + "@" + s.sequence(), s.blockCount());
                visitor.accept(new RetainedSnapshot(v.name(), s.sequence(), expiry, held,
                        s.sequence() == v.latestSequence()));
            }
        }
    }

    @Override
    public void forEachPbn(RetainedSnapshot snapshot, LongConsumer sink) {
        VolumeRecord v = byName.get(snapshot.volume().name());
        long blocks = blockCounts.get(snapshot.volume().name() + "@" + snapshot.sequence());
        SnapshotScan.forEachPbn(catalog, v.internalId(), snapshot.sequence(), blocks, sink);
    }

    @Override
    public void forEachStoredPbn(LongConsumer visitor) {
        store.locations().forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            visitor.accept(pbn);
            return true;
        });
    }

    @Override
    public BlockState state(long pbn) {
        if (!store.fingerprint(pbn, scratch)) {
            return BlockState.MISSING;
        }
        try {
            store.read(pbn, scratch);
            return BlockState.PRESENT;
        } catch (CorruptDataException e) {
            return BlockState.CORRUPT;
        }
    }
}
