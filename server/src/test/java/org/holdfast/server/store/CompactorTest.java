package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compaction keeps every live block readable, reclaims freed bytes, and survives a crash at each step. */
class CompactorTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    /** Writes n random blocks into small logs; frees those with i % keepEvery != 0; returns live payloads. */
    private Map<Long, byte[]> fill(int n, int keepEvery) {
        Map<Long, byte[]> live = new HashMap<>();
        Random r = new Random(7);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 16, FsyncPolicy.COMMIT, 64, 0), db)) {
            long[] pbns = new long[n];
            for (int i = 0; i < n; i++) {
                byte[] payload = new byte[BS];
                r.nextBytes(payload);
                byte[] fp = new byte[32];
                r.nextBytes(fp);
                pbns[i] = store.append(fp, 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
                if (i % keepEvery == 0) {
                    live.put(pbns[i], payload);
                }
            }
            store.sync();
            try (MetadataBatch b = new MetadataBatch()) {
                for (int i = 0; i < n; i++) {
                    if (i % keepEvery != 0) {
                        store.locations().delete(b, pbns[i]);
                    }
                }
                db.write(b, true);
            }
        }
        return live;
    }

    private void assertReadable(Map<Long, byte[]> live) {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 16, FsyncPolicy.COMMIT, 64, 0), db)) {
            StoredBlock b = new StoredBlock();
            for (Map.Entry<Long, byte[]> e : live.entrySet()) {
                store.read(e.getKey(), b);
                assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength()))
                        .as("pbn %d", e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    private long dataBytes() throws Exception {
        try (var s = Files.list(dir.resolve("data"))) {
            return s.mapToLong(p -> p.toFile().length()).sum();
        }
    }

    @Test
    void compact_sparseLogs_rewrittenSmallerAndEveryLiveBlockReads() throws Exception {
        Map<Long, byte[]> live = fill(200, 4);
        long before = dataBytes();
        Compactor.Result r;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            r = Compactor.compact(dir.resolve("data"), db, Compactor.DEFAULT_THRESHOLD);
        }
        assertThat(r.logsRewritten()).isGreaterThan(0);
        assertThat(r.recordsMoved()).isGreaterThan(0);
        assertThat(dataBytes()).isLessThan(before * 2 / 3);
        assertReadable(live);
    }

    @Test
    void compact_logWithNoLiveBlock_deleted() throws Exception {
        Map<Long, byte[]> live = fill(100, 1000); // only block 0 stays
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            Compactor.Result r = Compactor.compact(dir.resolve("data"), db, Compactor.DEFAULT_THRESHOLD);
            assertThat(r.logsDeleted()).isGreaterThan(0);
        }
        assertReadable(live);
    }

    @Test
    void crash_afterLocationBatchBeforeRename_finishedAtNextStart() throws Exception {
        Map<Long, byte[]> live = fill(200, 4);
        // run a compaction, then rebuild the on-disk state of a crash between step 2 and 3:
        // the locations name the compacted offsets, the intent is set, the old log is still in place
        Path data = dir.resolve("data");
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            CompactionCrashStates.afterLocationBatchBeforeRename(data, db, Compactor.DEFAULT_THRESHOLD);
            Compactor.compact(data, db, Compactor.DEFAULT_THRESHOLD);
            assertThat(db.metaLong(Compactor.META_INTENT, -1)).isEqualTo(-1);
        }
        assertReadable(live);
    }

    @Test
    void crash_beforeLocationBatch_strayFileDiscardedAndOldLogStillServes() throws Exception {
        Map<Long, byte[]> live = fill(200, 4);
        Path data = dir.resolve("data");
        Files.write(data.resolve(DataLog.fileName(1) + ".compact"), new byte[] {1, 2, 3});
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            Compactor.finishInterrupted(data, db);
        }
        assertThat(Files.exists(data.resolve(DataLog.fileName(1) + ".compact"))).isFalse();
        assertReadable(live);
    }

    @Test
    void corruptRecord_logLeftUntouched() throws Exception {
        Map<Long, byte[]> live = fill(200, 4);
        Path log1 = dir.resolve("data").resolve(DataLog.fileName(1));
        byte[] bytes = Files.readAllBytes(log1);
        bytes[FormatVersions.DATA_LOG_HEADER_BYTES + FormatVersions.RECORD_HEADER_BYTES + 10] ^= 1; // first record's data
        Files.write(log1, bytes);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            Compactor.Result r = Compactor.compact(dir.resolve("data"), db, Compactor.DEFAULT_THRESHOLD);
            assertThat(r.logsSkippedCorrupt()).isEqualTo(1);
        }
        assertThat(Files.readAllBytes(log1)).isEqualTo(bytes);
        live.remove(live.keySet().stream().min(Long::compare).orElseThrow()); // the damaged one
        assertReadable(live);
    }

    @Test
    void leftoverIntent_laterCompactionOfItsLogCrashesBeforeSwitch_noBlockLost() throws Exception {
        Map<Long, byte[]> live = fill(200, 4);
        Path data = dir.resolve("data");
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThat(Compactor.compact(data, db, Compactor.DEFAULT_THRESHOLD).logsRewritten()).isGreaterThan(0);
        }
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(data, 1L << 16, FsyncPolicy.COMMIT, 64, 0), db)) {
            // the state a failed clearIntent leaves after log 1's switch: the intent stays, its .compact is gone
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, Compactor.META_INTENT, 1);
                db.write(b, true);
            }
            // free all but the last of log 1's live blocks, so that it is compacted again and the last one moves
            List<Long> inLog1 = new ArrayList<>();
            store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
                if (logId == 1) {
                    inLog1.add(pbn);
                }
                return true;
            });
            assertThat(inLog1).hasSizeGreaterThan(3);
            try (MetadataBatch b = new MetadataBatch()) {
                for (int i = 0; i < inLog1.size(); i++) {
                    if (i < inLog1.size() - 1) {
                        store.locations().delete(b, inLog1.get(i));
                        live.remove(inLog1.get(i));
                    }
                }
                db.write(b, true);
            }
            // that compaction stops after writing log 1's .compact, before its switch (as a crash there would)
            Compactor c = new Compactor(store);
            c.beforeSwitch = id -> {
                throw new IllegalStateException("stopped before the switch of log " + id);
            };
            assertThatThrownBy(() -> c.run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE))
                    .hasMessageContaining("stopped before the switch of log 1");
            assertThat(Files.exists(data.resolve(DataLog.fileName(1) + ".compact"))).isTrue();
        }
        // the next start must not rename that un-switched copy over log 1
        assertReadable(live);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThat(db.metaLong(Compactor.META_INTENT, -1)).isEqualTo(-1);
        }
    }

    @Test
    void leftoverIntentWithItsCopy_runRefusesAndChangesNothing() throws Exception {
        fill(200, 4);
        Path data = dir.resolve("data");
        Path copy = data.resolve(DataLog.fileName(1) + ".compact");
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(data, 1L << 16, FsyncPolicy.COMMIT, 64, 0), db)) {
            // what a switch leaves at run time when its rename and the undo both failed: only a start may finish it
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, Compactor.META_INTENT, 1);
                db.write(b, true);
            }
            Files.write(copy, new byte[] {1, 2, 3});
            long before = dataBytes();
            byte[] log1 = Files.readAllBytes(data.resolve(DataLog.fileName(1)));
            assertThatThrownBy(() -> new Compactor(store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE))
                    .isInstanceOf(StoreException.class).hasMessageContaining("data log 1").hasMessageContaining("restarts");
            assertThat(db.metaLong(Compactor.META_INTENT, -1)).isEqualTo(1);
            assertThat(Files.readAllBytes(copy)).containsExactly(1, 2, 3);
            assertThat(Files.readAllBytes(data.resolve(DataLog.fileName(1)))).isEqualTo(log1);
            assertThat(dataBytes()).isEqualTo(before);
        }
    }

    @Test
    void leftoverIntent_copyEntryThatStatCannotResolve_intentKeptAndRunRefused() throws Exception {
        Path data = dir.resolve("data");
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(data, 1L << 16, FsyncPolicy.COMMIT, 64, 0), db)) {
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, Compactor.META_INTENT, 1);
                db.write(b, true);
            }
            // an entry L.compact whose existence Files.exists cannot determine (ELOOP here, as root; EIO or EACCES on a
            // failing disk) answers false: clearing the intent then lets the next start delete a copy the locations name
            Path copy = data.resolve(DataLog.fileName(1) + ".compact");
            Files.createSymbolicLink(copy, copy.getFileName());
            assertThat(Files.exists(copy)).isFalse();
            assertThatThrownBy(() -> new Compactor(store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE))
                    .isInstanceOf(StoreException.class).hasMessageContaining("data log 1");
            assertThat(db.metaLong(Compactor.META_INTENT, -1)).isEqualTo(1);
        }
    }

    @Test
    void startWithIntent_copyEntryThatStatCannotResolve_storeRefusesToOpenAndKeepsIntentAndEntry() throws Exception {
        Path data = dir.resolve("data");
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            try (DataStore store = DataStore.open(new DataStore.Settings(data, 1L << 16, FsyncPolicy.COMMIT, 64, 0), db)) {
                store.sync();
            }
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, Compactor.META_INTENT, 1);
                db.write(b, true);
            }
            // Files.exists answers false for this entry (ELOOP); before, the start cleared the intent and deleted the entry
            // as a stray, which with EIO or EACCES on a real copy loses the blocks the locations name in it
            Path copy = data.resolve(DataLog.fileName(1) + ".compact");
            Files.createSymbolicLink(copy, copy.getFileName());
            assertThatThrownBy(() -> DataStore.open(new DataStore.Settings(data, 1L << 16, FsyncPolicy.COMMIT, 64, 0), db))
                    .isInstanceOf(StoreException.class).hasMessageContaining(copy.toString());
            assertThat(db.metaLong(Compactor.META_INTENT, -1)).isEqualTo(1);
            assertThat(Files.isSymbolicLink(copy)).as("nothing deleted").isTrue();
        }
    }
}
