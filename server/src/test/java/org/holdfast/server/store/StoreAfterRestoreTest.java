package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store continued on a catalog restored from a backup: new log and PBN past everything in the
 * logs; blocks that compaction moved since are found where they are now, and those it dropped are
 * reported, never misread.
 */
class StoreAfterRestoreTest {
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    private static DataStore.Settings settings(Path data) {
        return new DataStore.Settings(data, 64L << 10, FsyncPolicy.COMMIT, 16, 0);
    }

    private static long append(DataStore store, long seed) throws Exception {
        byte[] b = DataStoreFrameTest.block(seed);
        return store.append(DataStoreFrameTest.sha(b), 0, b, 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK);
    }

    @Test
    void run_afterMoreWritesAndACompaction_continuesPastEverything_relocatesMovedBlocks_reportsFreedOnes() throws Exception {
        Path data = dir.resolve("data");
        Path catalog = dir.resolve("catalog");
        long lastAfterBackup;
        long[] early = new long[40];
        try (MetadataDb db = MetadataDb.open(catalog);
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            try (DataStore store = DataStore.open(settings(data), db)) {
                for (int i = 0; i < early.length; i++) {
                    early[i] = append(store, i);
                }
                store.sync();
                backups.create(db, "", 7);
                for (int i = 0; i < 40; i++) {
                    append(store, 1000 + i);
                }
                store.sync();
                lastAfterBackup = store.nextPbn() - 1;
                // GC frees every other early block; compaction then rewrites their sealed logs
                long[] freed = new long[early.length / 2];
                for (int i = 0; i < freed.length; i++) {
                    freed[i] = early[2 * i];
                }
                store.forget(freed, freed.length);
            }
            Compactor.Result r = Compactor.compact(data, db, 1.0);
            assertThat(r.logsRewritten()).as(r.toString()).isPositive();
        }
        // the disk's catalog is lost: the backup's comes back
        Path restored = dir.resolve("restored");
        try (CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            backups.restore(1, restored);
        }
        int highestLog;
        try (var s = Files.list(data)) {
            highestLog = s.mapToInt(p -> DataLog.parseId(p.getFileName().toString())).max().orElseThrow();
        }
        StoreAfterRestore.Report report;
        try (MetadataDb db = MetadataDb.open(restored)) {
            report = StoreAfterRestore.run(data, db, null, null, dir.resolve("scratch"));
            assertThat(report.newLogId()).isEqualTo(highestLog + 1);
            assertThat(report.pbnReservedAfter()).isEqualTo(lastAfterBackup + 1);
            assertThat(report.blocksRelocated()).as("the kept early blocks moved within their logs").isPositive();
            assertThat(report.blocksLost()).as("the freed ones compaction dropped").isEqualTo(early.length / 2);
            assertThat(report.missingLogs()).isNotEmpty().allMatch(id -> id <= report.backupLogId());
            assertThat(report.blocksMarkedBad()).as("every lost block is marked bad").isEqualTo(early.length / 2);
            try (DataStore store = DataStore.open(settings(data), db)) {
                assertThat(store.nextPbn()).isGreaterThan(lastAfterBackup);
                assertThat(store.stats().activeLogId()).isEqualTo(highestLog + 1);
                for (int i = 0; i < early.length; i++) {
                    assertThat(store.badBlocks().isBad(early[i])).as("PBN %d (early %d) bad", early[i], i).isEqualTo(i % 2 == 0);
                }
                assertThat(store.badBlocks().get(early[0]).orElseThrow().problem()).contains("compacted away", "catalog-restore");
                StoredBlock b = new StoredBlock();
                for (int i = 1; i < early.length; i += 2) {
                    store.read(early[i], b);
                    DataStoreFrameTest.assertBlock(b, early[i], i);
                }
                long fresh = append(store, 5000);
                store.sync();
                assertThat(fresh).isEqualTo(lastAfterBackup + 1);
            }
        }
    }

    @Test
    void run_s3_newDiskAfterACompactionOfArchivedLogs_relocatesFromTheNewestObjects_andReadsThemBack() throws Exception {
        byte[][] early = new byte[40][];
        long[] earlyPbns;
        int maxArchived;
        long lastArchivedPbn;
        try (ArchiveFixture f = new ArchiveFixture(dir.resolve("old"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            LogArchive archive = f.archive("node-a", LogCache.Settings.defaults());
            try (DataStore store = DataStore.open(f.settings(), f.db, archive)) {
                earlyPbns = ArchiveFixture.write(store, early, 1);
                backups.create(f.db, "", 7);
                ArchiveFixture.write(store, new byte[40][], 2);
                archive.awaitUploads(60_000);
                long[] freed = new long[early.length / 2];
                for (int i = 0; i < freed.length; i++) {
                    freed[i] = earlyPbns[2 * i];
                }
                store.forget(freed, freed.length);
                Compactor.Result r = new Compactor(store).run(1.0, Long.MAX_VALUE);
                assertThat(r.logsRewritten()).as(r.toString()).isPositive();
                archive.awaitUploads(60_000); // the old objects' deletions
                maxArchived = archive.uploadedIds().stream().mapToInt(Integer::intValue).max().orElseThrow();
                long[] max = new long[1];
                store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                    if (archive.isUploaded(logId)) {
                        max[0] = Math.max(max[0], pbn);
                    }
                    return true;
                });
                lastArchivedPbn = max[0]; // the active log goes with the disk: its PBNs nobody can know
                assertThat(lastArchivedPbn).isGreaterThan(earlyPbns[early.length - 1]);
            } finally {
                archive.close();
            }
            // a new disk: the backup's catalog, an empty data directory, the bucket
            Path data = dir.resolve("new/data");
            Path restored = dir.resolve("new/catalog");
            backups.restore(1, restored);
            try (MetadataDb db = MetadataDb.open(restored)) {
                StoreAfterRestore.Report report;
                try (org.holdfast.server.store.object.ObjectStore objects =
                             org.holdfast.server.store.object.S3ObjectStore.open(f.s3.settings("t/"))) {
                    report = StoreAfterRestore.run(data, db, objects, "node-a", dir.resolve("scratch"));
                }
                assertThat(report.newLogId()).isGreaterThan(maxArchived);
                assertThat(report.pbnReservedAfter()).isGreaterThan(lastArchivedPbn);
                assertThat(report.blocksRelocated()).isPositive();
                assertThat(report.blocksLost()).isEqualTo(early.length / 2);
                LogArchive again = f.archive("node-a", LogCache.Settings.defaults());
                try (DataStore store = DataStore.open(new DataStore.Settings(data, 64 << 10, FsyncPolicy.COMMIT, 64, 0), db, again)) {
                    StoredBlock b = new StoredBlock();
                    for (int i = 1; i < early.length; i += 2) {
                        store.read(earlyPbns[i], b);
                        assertThat(java.util.Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + BLOCK))
                                .as("block %d from the compacted object", earlyPbns[i]).isEqualTo(early[i]);
                    }
                } finally {
                    again.close();
                }
            }
        }
    }

    /**
     * The same disk (its logs still there), an archived log rewritten after the backup by a compaction
     * that dropped only records freed before it, behind the last one it names: those stay where they were, but
     * the restored upload record names the object the compaction deleted. It must name the local copy's
     * epoch (or none, so that the server uploads it), never the deleted object.
     */
    @Test
    void run_s3_sameDisk_logRewrittenBehindItsNamedRecords_uploadRecordNamesTheLocalCopy() throws Exception {
        try (ArchiveFixture f = new ArchiveFixture(dir.resolve("same"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            LogArchive archive = f.archive("node-a", LogCache.Settings.defaults());
            int log;
            try (DataStore store = DataStore.open(f.settings(), f.db, archive)) {
                ArchiveFixture.write(store, new byte[40][], 3); // seals logs of 15 blocks each
                archive.awaitUploads(60_000);
                java.util.TreeMap<Long, Long> byOffset = new java.util.TreeMap<>(); // of the first archived log
                int[] first = {-1};
                store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                    if (archive.isUploaded(logId) && (first[0] < 0 || logId < first[0])) {
                        first[0] = logId;
                        byOffset.clear();
                    }
                    if (logId == first[0]) {
                        byOffset.put(offset, pbn);
                    }
                    return true;
                });
                log = first[0];
                assertThat(byOffset).hasSizeGreaterThan(3);
                // the log's last two records die before the backup, which so names none of them
                long[] tail = {byOffset.lastEntry().getValue(), byOffset.lowerEntry(byOffset.lastKey()).getValue()};
                store.forget(tail, tail.length);
                backups.create(f.db, "", 7);
                // after the backup a compaction drops them: every record the backup names stays in place
                Compactor.Result r = new Compactor(store).run(1.0, Long.MAX_VALUE);
                assertThat(r.logsRewritten()).as(r.toString()).isPositive();
                archive.awaitUploads(60_000);
            } finally {
                archive.close();
            }
            Path data = f.settings().dir();
            long localEpoch = LogUploads.epochOf(data.resolve(DataLog.fileName(log)));
            Path restored = dir.resolve("same/restored-catalog");
            backups.restore(1, restored);
            try (MetadataDb db = MetadataDb.open(restored)) {
                assertThat(uploadEpoch(db, log)).as("the backup's record names the old object").isNotEqualTo(localEpoch);
                try (org.holdfast.server.store.object.ObjectStore objects =
                             org.holdfast.server.store.object.S3ObjectStore.open(f.s3.settings("t/"))) {
                    StoreAfterRestore.run(data, db, objects, "node-a", dir.resolve("scratch"));
                }
                Long after = uploadEpoch(db, log);
                assertThat(after == null || after == localEpoch).as("upload record of log %d: %s, local copy's epoch %d", log, after, localEpoch)
                        .isTrue();
            }
        }
    }

    private static Long uploadEpoch(MetadataDb db, int id) {
        byte[] v = db.get(MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(id)));
        return v == null ? null : Bytes.getLong(v, 0);
    }

    @Test
    void holds_recordHeaderAgainstLocation_acceptsTheRecord_rejectsAnotherPbnOrLength() {
        byte[] record = new byte[FormatVersions.RECORD_HEADER_BYTES + BLOCK];
        RecordFormat.writeHeader(record, 77, FormatVersions.CODEC_RAW, BLOCK, BLOCK, new java.util.zip.CRC32C());
        byte[] h = java.util.Arrays.copyOf(record, FormatVersions.RECORD_HEADER_BYTES + 2);
        assertThat(StoreAfterRestore.holds(h, 77, BLOCK)).isTrue();
        assertThat(StoreAfterRestore.holds(h, 78, BLOCK)).isFalse();
        assertThat(StoreAfterRestore.holds(h, 77, BLOCK - 1)).isFalse();
        assertThat(StoreAfterRestore.holds(new byte[3], 77, BLOCK)).isFalse();
    }

    @Test
    void run_backupOfAnotherStore_sameLayout_refused_dataDirectoryUntouched() throws Exception {
        // two appliances that stored the same number of raw blocks: same PBNs at the same offsets, other bytes
        Path dataA = dir.resolve("a/data");
        Path dataB = dir.resolve("b/data");
        long[] pbns = new long[10];
        try (MetadataDb db = MetadataDb.open(dir.resolve("a/catalog"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            try (DataStore store = DataStore.open(settings(dataA), db)) {
                for (int i = 0; i < pbns.length; i++) {
                    pbns[i] = append(store, i);
                }
                store.sync();
            }
            backups.create(db, "", 7);
        }
        try (MetadataDb db = MetadataDb.open(dir.resolve("b/catalog"));
             DataStore store = DataStore.open(settings(dataB), db)) {
            for (int i = 0; i < pbns.length; i++) {
                assertThat(append(store, 700 + i)).isEqualTo(pbns[i]);
            }
            store.sync();
        }
        java.util.List<String> before;
        try (var s = Files.list(dataB)) {
            before = s.map(p -> p.getFileName().toString()).sorted().toList();
        }
        Path restored = dir.resolve("restored");
        try (CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            backups.restore(1, restored);
        }
        try (MetadataDb db = MetadataDb.open(restored)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> StoreAfterRestore.run(dataB, db, null, null, dir.resolve("scratch")))
                    .as("A's catalog over B's logs would point A's snapshots at B's blocks (and GC would free B's)")
                    .isInstanceOf(CatalogRestoreRefusedException.class).hasMessageContaining("another store");
        }
        try (var s = Files.list(dataB)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList()).isEqualTo(before);
        }
    }

    @Test
    void run_archivedStore_withoutObjectStoreSettings_refused_beforeAnythingIsWritten() throws Exception {
        try (ArchiveFixture f = new ArchiveFixture(dir.resolve("old"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            LogArchive archive = f.archive("node-a", LogCache.Settings.defaults());
            try (DataStore store = DataStore.open(f.settings(), f.db, archive)) {
                ArchiveFixture.write(store, new byte[40][], 1);
                archive.awaitUploads(60_000);
                backups.create(f.db, "", 7);
            } finally {
                archive.close();
            }
            Path data = dir.resolve("new/data");
            Path restored = dir.resolve("new/catalog");
            backups.restore(1, restored);
            try (MetadataDb db = MetadataDb.open(restored)) {
                // the operator forgot --holdfast.store.backend=s3: the bucket's logs, ids and PBNs would go unseen
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> StoreAfterRestore.run(data, db, null, null, dir.resolve("scratch")))
                        .isInstanceOf(CatalogRestoreRefusedException.class).hasMessageContaining("--holdfast.store.backend=s3");
            }
            assertThat(data).as("nothing written").doesNotExist();
        }
    }

    @Test
    void run_backupTakenInACompactionSwitch_staleIntentNeverSwapsInALaterCompactionsLeftover() throws Exception {
        Path data = dir.resolve("data");
        long[] early = new long[40];
        int first;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            try (DataStore store = DataStore.open(settings(data), db)) {
                for (int i = 0; i < early.length; i++) {
                    early[i] = append(store, i);
                }
                store.sync();
            }
            try (var s = Files.list(data)) {
                first = s.mapToInt(p -> DataLog.parseId(p.getFileName().toString())).filter(id -> id >= 0).min().orElseThrow();
            }
            // the backup caught a compaction of the first log between its switch batch and the intent's clearing
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, Compactor.META_INTENT, first);
                db.write(b, true);
            }
            backups.create(db, "", 7);
        }
        // later, the lost server died in another compaction of that log, before its switch: its copy is half written
        Files.write(data.resolve(DataLog.fileName(first) + ".compact"), new byte[100]);
        Path restored = dir.resolve("restored");
        try (CatalogBackups backups = CatalogBackups.open(dir.resolve("backups"))) {
            backups.restore(1, restored);
        }
        try (MetadataDb db = MetadataDb.open(restored)) {
            StoreAfterRestore.run(data, db, null, null, dir.resolve("scratch"));
            try (DataStore store = DataStore.open(settings(data), db)) {
                StoredBlock b = new StoredBlock();
                for (int i = 0; i < early.length; i++) {
                    store.read(early[i], b);
                    DataStoreFrameTest.assertBlock(b, early[i], i);
                }
            }
        }
    }
}
