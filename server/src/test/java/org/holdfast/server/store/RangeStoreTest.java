package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A data store over a PBN range far from 1 (a worker's): allocation, reads, GC, compaction and the range's refusals. */
class RangeStoreTest {
    private static final int BS = 4096;
    private static final long FIRST = 1L << 40;
    private static final PbnRange RANGE = new PbnRange(FIRST, FIRST + (1L << 20));

    @TempDir
    Path dir;

    private MetadataDb db;
    private DataStore store;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private DataStore.Settings settings(PbnRange range) {
        return new DataStore.Settings(dir.resolve("data"), 1L << 16, FsyncPolicy.COMMIT, 16, 0, range);
    }

    private void open(PbnRange range) {
        if (db == null) {
            db = MetadataDb.open(dir.resolve("catalog"));
        }
        store = DataStore.open(settings(range), db);
    }

    private void closeAll() {
        if (store != null) {
            store.close();
            store = null;
        }
        if (db != null) {
            db.close();
            db = null;
        }
    }

    private static byte[] block(long seed) {
        byte[] b = new byte[BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] fp(long seed) {
        byte[] f = new byte[32];
        new Random(~seed).nextBytes(f);
        return f;
    }

    private long append(long seed) {
        return store.append(fp(seed), 0, block(seed), 0, BS, FormatVersions.CODEC_RAW, BS);
    }

    private byte[] read(long pbn) {
        StoredBlock b = new StoredBlock();
        store.read(pbn, b);
        return Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength());
    }

    /** Every byte of the data logs and the store's meta keys: what "nothing changed" compares. */
    private String snapshotOfDisk() throws Exception {
        StringBuilder s = new StringBuilder();
        try (Stream<Path> files = Files.list(dir.resolve("data"))) {
            for (Path p : files.sorted().toList()) {
                s.append(p.getFileName()).append(':').append(Arrays.hashCode(Files.readAllBytes(p))).append(';');
            }
        }
        MetadataDb d = db != null ? db : MetadataDb.open(dir.resolve("catalog"));
        try {
            for (String key : new String[] {FormatVersions.META_DURABLE_POINT, FormatVersions.META_PBN_RESERVED, FormatVersions.META_PBN_RANGE}) {
                byte[] v = d.get(d.handle(MetadataDb.Column.META), MetadataDb.bytes(key));
                s.append(key).append('=').append(v == null ? "none" : Arrays.toString(v)).append(';');
            }
        } finally {
            if (d != db) {
                d.close();
            }
        }
        return s.toString();
    }

    @Test
    void append_rangeAt2To40_pbnsStartAtRangeFirstAndReadBack() {
        open(RANGE);
        long a = append(1);
        long b = append(2);
        long c = append(3);
        assertThat(new long[] {a, b, c}).containsExactly(FIRST, FIRST + 1, FIRST + 2);
        assertThat(read(b)).isEqualTo(block(2)); // from pending, before the sync
        store.sync();
        assertThat(read(a)).isEqualTo(block(1));
        assertThat(read(c)).isEqualTo(block(3));
        assertThat(store.range()).isEqualTo(RANGE);
        assertThat(store.nextPbn()).isEqualTo(FIRST + 3);
    }

    @Test
    void appendFrame_rangeStore_membersFromRangeFirstAndAFrameCrossingTheLimitRefused() throws Exception {
        PbnRange small = new PbnRange(FIRST, FIRST + 5);
        open(small);
        DataStoreFrameTest frames = new DataStoreFrameTest();
        DataStoreFrameTest.Frame f = frames.frame(1, 2, 3);
        long first = store.appendFrame(f.fps(), 0, 3, f.zstd(), 0, f.zstd().length, BS);
        assertThat(first).isEqualTo(FIRST);
        store.sync();
        StoredBlock b = new StoredBlock();
        for (int k = 0; k < 3; k++) {
            store.read(first + k, b);
            DataStoreFrameTest.assertBlock(b, first + k, k + 1);
        }
        String before = snapshotOfDisk();
        DataStoreFrameTest.Frame crossing = frames.frame(4, 5, 6); // PBNs FIRST+3..FIRST+5: one past the limit
        assertThatThrownBy(() -> store.appendFrame(crossing.fps(), 0, 3, crossing.zstd(), 0, crossing.zstd().length, BS))
                .isInstanceOf(PbnRangeFullException.class).hasMessageContaining("3 wanted");
        store.sync();
        assertThat(snapshotOfDisk()).isEqualTo(before);
        DataStoreFrameTest.Frame fits = frames.frame(4, 5);
        assertThat(store.appendFrame(fits.fps(), 0, 2, fits.zstd(), 0, fits.zstd().length, BS)).isEqualTo(FIRST + 3);
        frames.close();
    }

    @Test
    void readBatch_rangeStore_readsEveryBlockInOrder() {
        open(RANGE);
        long[] pbns = new long[20];
        for (int i = 0; i < pbns.length; i++) {
            pbns[i] = append(100 + i);
        }
        store.sync();
        BlockBatch batch = new BlockBatch(32, 1 << 20, FormatVersions.MAX_STORED_BYTES);
        int n = store.readBatch(pbns, 0, pbns.length, batch);
        assertThat(n).isEqualTo(pbns.length);
        for (int i = 0; i < n; i++) {
            assertThat(batch.pbn(i)).isEqualTo(FIRST + i);
            assertThat(Arrays.copyOfRange(batch.data(), batch.dataOffset(i), batch.dataOffset(i) + batch.storedLength(i)))
                    .isEqualTo(block(100 + i));
        }
    }

    @Test
    void forget_rangeStore_blockGoneOthersStay() {
        open(RANGE);
        long a = append(1);
        long b = append(2);
        store.sync();
        store.forget(new long[] {a}, 1);
        assertThatThrownBy(() -> read(a)).isInstanceOf(CorruptDataException.class).hasMessageContaining("no location");
        assertThat(read(b)).isEqualTo(block(2));
    }

    @Test
    void reopen_afterUncleanStop_syncedBlocksReadAndPbnsStayInRangeNeverReused() {
        open(RANGE);
        long a = append(1);
        store.sync();
        long lost = append(2); // never synced: dropped by recovery, its PBN never handed out again
        db.close(); // the process dies: the store is neither synced nor closed
        db = null;
        store = null;
        open(RANGE);
        assertThat(read(a)).isEqualTo(block(1));
        assertThatThrownBy(() -> read(lost)).isInstanceOf(CorruptDataException.class);
        long next = append(3);
        assertThat(next).isGreaterThan(lost);
        assertThat(RANGE.contains(next)).isTrue();
        store.sync();
        assertThat(read(next)).isEqualTo(block(3));
    }

    @Test
    void compact_partlyDeadLogs_liveBlocksReadAndLogsShrink() throws Exception {
        open(RANGE);
        Map<Long, byte[]> live = new HashMap<>();
        long[] dead = new long[200];
        int nDead = 0;
        for (int i = 0; i < 200; i++) {
            long pbn = append(1000 + i);
            if (i % 4 == 0) {
                live.put(pbn, block(1000 + i));
            } else {
                dead[nDead++] = pbn;
            }
        }
        store.sync();
        store.forget(dead, nDead);
        closeAll();
        long before = dataBytes();
        Compactor.Result r;
        try (MetadataDb d = MetadataDb.open(dir.resolve("catalog"))) {
            r = Compactor.compact(dir.resolve("data"), d, Compactor.DEFAULT_THRESHOLD); // offline: adopts the stored range
        }
        assertThat(r.logsRewritten()).isGreaterThan(0);
        assertThat(dataBytes()).isLessThan(before * 2 / 3);
        open(RANGE);
        for (Map.Entry<Long, byte[]> e : live.entrySet()) {
            assertThat(read(e.getKey())).as("pbn %d", e.getKey()).isEqualTo(e.getValue());
        }
        assertThat(append(5)).isEqualTo(FIRST + 200);
    }

    private long dataBytes() throws Exception {
        try (Stream<Path> s = Files.list(dir.resolve("data"))) {
            return s.mapToLong(p -> p.toFile().length()).sum();
        }
    }

    @Test
    void append_pastRangeLimit_refusedNamingRangeAndNothingChanged() throws Exception {
        PbnRange small = new PbnRange(FIRST, FIRST + 3);
        open(small);
        for (int i = 0; i < 3; i++) {
            append(i);
        }
        store.sync();
        String before = snapshotOfDisk();
        DataStore.Stats stats = store.stats();
        assertThatThrownBy(() -> append(9)).isInstanceOf(PbnRangeFullException.class)
                .hasMessageContaining(small.toString()).hasMessageContaining("nothing was appended");
        byte[] frame = new byte[64];
        assertThatThrownBy(() -> store.appendFrame(new byte[64], 0, 2, frame, 0, frame.length, BS))
                .isInstanceOf(PbnRangeFullException.class);
        store.sync();
        assertThat(store.stats()).isEqualTo(stats);
        assertThat(snapshotOfDisk()).isEqualTo(before);
    }

    @Test
    void append_reservation_neverPastRangeLimit() {
        PbnRange small = new PbnRange(FIRST, FIRST + 5);
        open(small); // reservation batch 16 would reach past the limit
        append(1);
        assertThat(db.metaLong(FormatVersions.META_PBN_RESERVED, -1)).isEqualTo(small.limit());
    }

    @Test
    void open_otherRange_refusedAndNothingChanged() throws Exception {
        open(RANGE);
        append(1);
        closeAll();
        String before = snapshotOfDisk();
        PbnRange other = new PbnRange(FIRST + (1L << 20), FIRST + (2L << 20));
        db = MetadataDb.open(dir.resolve("catalog"));
        assertThatThrownBy(() -> DataStore.open(settings(other), db)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(RANGE.toString()).hasMessageContaining(other.toString())
                .hasMessageContaining("another node's data directory");
        assertThatThrownBy(() -> DataStore.open(settings(PbnRange.STANDALONE), db)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("standalone");
        db.close();
        db = null;
        assertThat(snapshotOfDisk()).isEqualTo(before);
        open(RANGE);
        assertThat(read(FIRST)).isEqualTo(block(1));
    }

    @Test
    void open_standaloneStoreOverRange_refusedAndNoRangeKeyWritten() throws Exception {
        open(PbnRange.STANDALONE);
        assertThat(append(1)).isEqualTo(1);
        closeAll();
        String before = snapshotOfDisk();
        assertThat(before).contains(FormatVersions.META_PBN_RANGE + "=none"); // a standalone catalog stays as it was
        db = MetadataDb.open(dir.resolve("catalog"));
        assertThatThrownBy(() -> DataStore.open(settings(RANGE), db)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("standalone");
        db.close();
        db = null;
        assertThat(snapshotOfDisk()).isEqualTo(before);
    }

    @Test
    void readAndRepairAndForget_pbnOutsideRange_refusedAndNothingChanged() throws Exception {
        open(RANGE);
        long a = append(1);
        store.sync();
        String before = snapshotOfDisk();
        long outside = FIRST - 1;
        long beyond = RANGE.limit();
        assertThatThrownBy(() -> read(outside)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("outside the PBN range " + RANGE);
        BlockBatch batch = new BlockBatch(4, 1 << 20, FormatVersions.MAX_STORED_BYTES);
        assertThatThrownBy(() -> store.readBatch(new long[] {a, beyond}, 0, 2, batch)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.forget(new long[] {a, outside}, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nothing was changed");
        assertThatThrownBy(() -> store.repair(beyond, fp(1), 0, block(1), 0, BS, FormatVersions.CODEC_RAW, BS))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.markDamaged(outside, "test")).isInstanceOf(IllegalArgumentException.class);
        assertThat(store.badBlocks().isEmpty()).isTrue();
        assertThat(read(a)).isEqualTo(block(1)); // the refused forget left it
        assertThat(snapshotOfDisk()).isEqualTo(before);
    }

    @Test
    void openReadOnly_rangeStore_adoptsStoredRangeAndReads() {
        open(RANGE);
        long a = append(7);
        closeAll();
        db = MetadataDb.open(dir.resolve("catalog"));
        store = DataStore.openReadOnly(dir.resolve("data"), db);
        assertThat(store.range()).isEqualTo(RANGE);
        assertThat(read(a)).isEqualTo(block(7));
    }
}
