package org.holdfast.server.gc;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.DiskSpace;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.MetadataDb;

/**
 * The real storage stack the GC tests run on, opened and closed in the server's order: RocksDB
 * catalog, data logs, exact index (or one the test opens), GC service (BOSC committing after 1 ms
 * idle, default policy 12h) and the snapshot commit wired to it through a {@link GcCommitHook},
 * optionally wrapped; optionally with an object-store archive of the sealed logs.
 */
final class GcStoreFixture implements AutoCloseable {
    final MetadataDb db;
    final DataStore store;
    final FingerprintIndex index;
    final Catalog catalog;
    final GcService gc;
    final SnapshotCommit commit;
    private final LogArchive archive;

    private GcStoreFixture(MetadataDb db, DataStore store, FingerprintIndex index, Catalog catalog, GcService gc,
                           SnapshotCommit commit, LogArchive archive) {
        this.archive = archive;
        this.db = db;
        this.store = store;
        this.index = index;
        this.catalog = catalog;
        this.gc = gc;
        this.commit = commit;
    }

    /**
     * Opens the stack under {@code dir} with data logs of {@code logBytes}; {@code wrapHook} may wrap
     * the GC commit hook (a crash injector). If the GC service refuses to open, everything opened
     * before it is closed again and the refusal is thrown.
     */
    static GcStoreFixture open(Path dir, Clock clock, long logBytes, Duration grace, int sweepBatchChunks,
                               UnaryOperator<CommitHook> wrapHook) {
        return open(dir, clock, logBytes, grace, sweepBatchChunks, wrapHook, CommitParts.DEFAULT_PART_ENTRIES);
    }

    /** As above, with commits of more than {@code partEntries} delta entries written in map chunks and logged in GC parts. */
    static GcStoreFixture open(Path dir, Clock clock, long logBytes, Duration grace, int sweepBatchChunks,
                               UnaryOperator<CommitHook> wrapHook, int partEntries) {
        return open(dir, clock, logBytes, grace, sweepBatchChunks, wrapHook, partEntries, null);
    }

    /** As above, with sealed logs archived in {@code archive} (backend s3; closed with the stack) unless it is null. */
    static GcStoreFixture open(Path dir, Clock clock, long logBytes, Duration grace, int sweepBatchChunks,
                               UnaryOperator<CommitHook> wrapHook, int partEntries, LogArchive archive) {
        return open(dir, clock, logBytes, grace, sweepBatchChunks, wrapHook, partEntries, archive, ExactFingerprintIndex::new);
    }

    /** As above, with the fingerprint index {@code indexes} opens on the metadata database (the GC forgets freed blocks there). */
    static GcStoreFixture open(Path dir, Clock clock, long logBytes, Duration grace, int sweepBatchChunks,
                               UnaryOperator<CommitHook> wrapHook, int partEntries, LogArchive archive,
                               Function<MetadataDb, FingerprintIndex> indexes) {
        return open(dir, clock, logBytes, grace, sweepBatchChunks, wrapHook, partEntries, archive, indexes, PbnRange.STANDALONE);
    }

    /** As above, the data store (and so the GC metadata) over the PBNs of {@code range}. */
    static GcStoreFixture open(Path dir, Clock clock, long logBytes, Duration grace, int sweepBatchChunks,
                               UnaryOperator<CommitHook> wrapHook, int partEntries, LogArchive archive,
                               Function<MetadataDb, FingerprintIndex> indexes, PbnRange range) {
        return open(dir, clock, logBytes, grace, sweepBatchChunks, wrapHook, partEntries, archive, indexes, range,
                org.holdfast.server.store.Compactor.DEFAULT_RECLAIM_THRESHOLD);
    }

    /** As above, reclaim-now compacting logs whose live share is below {@code reclaimThreshold} (the cycle's: 0.5). */
    static GcStoreFixture open(Path dir, Clock clock, long logBytes, Duration grace, int sweepBatchChunks,
                               UnaryOperator<CommitHook> wrapHook, int partEntries, LogArchive archive,
                               Function<MetadataDb, FingerprintIndex> indexes, PbnRange range, double reclaimThreshold) {
        return open(dir, clock, logBytes, grace, sweepBatchChunks, wrapHook, partEntries, archive, indexes, range, reclaimThreshold,
                null, 0);
    }

    /** As above, the data store asking {@code disk} (null: the real one) for free space, keeping {@code minFreeBytes} for GC. */
    static GcStoreFixture open(Path dir, Clock clock, long logBytes, Duration grace, int sweepBatchChunks,
                               UnaryOperator<CommitHook> wrapHook, int partEntries, LogArchive archive,
                               Function<MetadataDb, FingerprintIndex> indexes, PbnRange range, double reclaimThreshold,
                               DiskSpace disk, long minFreeBytes) {
        MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
        DataStore.Settings settings = new DataStore.Settings(dir.resolve("data"), logBytes, FsyncPolicy.COMMIT, 64, minFreeBytes, range);
        DataStore store = DataStore.open(settings, db, disk != null ? disk : DiskSpace.of(settings.dir()), archive);
        FingerprintIndex index = indexes.apply(db);
        Catalog catalog = new Catalog(db);
        Object[] monitor = new Object[1];
        GcService gc;
        try {
            gc = GcService.open(new GcService.Settings(dir.resolve("gc"), BoscSettings.defaults().withCommitIdle(Duration.ofMillis(1)),
                    grace, "12h", sweepBatchChunks, org.holdfast.server.store.Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE,
                    reclaimThreshold), catalog, store, index, clock, () -> monitor[0]);
        } catch (RuntimeException e) {
            index.close();
            store.close();
            if (archive != null) {
                archive.close();
            }
            db.close();
            throw e;
        }
        SnapshotCommit commit = new SnapshotCommit(catalog, wrapHook.apply(new GcCommitHook(gc, partEntries)), clock, partEntries);
        monitor[0] = commit;
        return new GcStoreFixture(db, store, index, catalog, gc, commit, archive);
    }

    /** Stores a block of {@code blockSize} random bytes from {@code seed}, synced and protected as a backup's would be; answers its PBN. */
    long storeBlock(long seed, int blockSize) {
        byte[] payload = new byte[blockSize];
        new java.util.Random(seed).nextBytes(payload);
        try {
            byte[] fp = java.security.MessageDigest.getInstance("SHA-256").digest(payload);
            long pbn = store.append(fp, 0, payload, 0, blockSize, org.holdfast.server.store.FormatVersions.CODEC_RAW, blockSize);
            store.sync();
            if (!gc.guard().protect(pbn)) {
                throw new IllegalStateException("fresh PBN " + pbn + " refused");
            }
            return pbn;
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** The non-zero PBNs every snapshot of {@code volume} maps. */
    Set<Long> mappedPbns(VolumeRecord volume) {
        Set<Long> out = new HashSet<>();
        for (SnapshotRecord s : catalog.snapshots(volume)) {
            try (MapCursor c = catalog.mapCursor(volume.internalId())) {
                c.startScan(s.sequence(), 0, s.blockCount());
                while (c.nextMapped()) {
                    if (c.pbn() != 0) {
                        out.add(c.pbn());
                    }
                }
            }
        }
        return out;
    }

    /** Closes the GC service (flushing it), then the index, the data store and the catalog. */
    @Override
    public void close() {
        gc.close();
        closeStorage();
    }

    /** As a crash would leave things: the GC service is dropped without flushing, the rest closed. */
    void abandon() {
        gc.abandon();
        closeStorage();
    }

    private void closeStorage() {
        index.close();
        store.close();
        if (archive != null) {
            archive.close(); // after the store (its last sync may schedule uploads), before the catalog they confirm into
        }
        db.close();
    }
}
