package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bad-block registry and in-place repair against a real store: marks, repairs, crashes, restarts, GC. */
class BadBlockRepairTest {
    private static final int BLOCK = 4096;

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

    private void open() {
        db = MetadataDb.open(dir.resolve("catalog"));
        store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 256L << 20, FsyncPolicy.COMMIT, 16, 0), db);
    }

    private void reopen() {
        store.close();
        db.close();
        open();
    }

    /** The process dies: nothing of the store is synced or closed (synced data is on disk). */
    private void crash() {
        db.close();
        db = null;
        store = null;
        open();
    }

    private static byte[] block(long seed) {
        byte[] b = new byte[BLOCK];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] fp(long seed) {
        byte[] f = new byte[32];
        new Random(~seed).nextBytes(f);
        return f;
    }

    /** Stores three blocks and damages the second one's stored bytes on disk; returns its PBN. */
    private long storeAndRot() throws IOException {
        open();
        for (int i = 1; i <= 3; i++) {
            store.append(fp(i), 0, block(i), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK);
        }
        store.sync();
        StoredBlock b = new StoredBlock();
        store.read(2, b);
        long at = b.offset + FormatVersions.RECORD_HEADER_BYTES + 100;
        try (FileChannel ch = FileChannel.open(dir.resolve("data").resolve(DataLog.fileName(b.logId)), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {(byte) 0xff, 0x00, 0x11}), at);
        }
        assertThatThrownBy(() -> store.read(2, new StoredBlock())).isInstanceOf(CorruptBlockException.class)
                .hasMessageContaining("pbn 2").hasMessageContaining("log-");
        assertThat(store.badBlocks().isBad(2)).as("a failed read marks the block bad at once").isTrue();
        return 2;
    }

    private byte[] readBack(long pbn) {
        StoredBlock b = new StoredBlock();
        store.read(pbn, b);
        return Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength());
    }

    @Test
    void markedBlock_survivesRestart_andIsFoundByFingerprint() throws IOException {
        long pbn = storeAndRot();
        reopen();
        assertThat(store.badBlocks().isBad(pbn)).isTrue();
        assertThat(store.badBlocks().holding(fp(2), 0)).isEqualTo(pbn);
        assertThat(store.badBlocks().get(pbn).orElseThrow().file()).contains("log-");
        assertThat(store.badBlocks().isBad(1)).isFalse();
    }

    @Test
    void repair_sameFingerprint_movesLocationClearsMark_survivesRestart() throws IOException {
        long pbn = storeAndRot();
        assertThat(store.repair(pbn, fp(2), 0, block(2), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK)).isTrue();
        assertThat(store.badBlocks().isBad(pbn)).as("bad until the repair is synced").isTrue();
        store.sync();
        assertThat(store.badBlocks().isBad(pbn)).isFalse();
        assertThat(readBack(pbn)).isEqualTo(block(2));
        reopen();
        assertThat(store.badBlocks().isBad(pbn)).isFalse();
        assertThat(readBack(pbn)).as("the repaired PBN after a restart").isEqualTo(block(2));
        assertThat(readBack(1)).isEqualTo(block(1));
        assertThat(readBack(3)).isEqualTo(block(3));
    }

    @Test
    void repair_otherFingerprint_repairsNothing() throws IOException {
        long pbn = storeAndRot();
        assertThat(store.repair(pbn, fp(9), 0, block(9), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK))
                .as("an upload of other content is no repair").isFalse();
        store.sync();
        reopen();
        assertThat(store.badBlocks().isBad(pbn)).isTrue();
        assertThatThrownBy(() -> store.read(pbn, new StoredBlock())).isInstanceOf(CorruptBlockException.class);
    }

    @Test
    void repair_soundBlock_isRefused() throws IOException {
        storeAndRot();
        assertThat(store.repair(1, fp(1), 0, block(9), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK))
                .as("a block that is not bad is never rewritten").isFalse();
        store.sync();
        assertThat(readBack(1)).isEqualTo(block(1));
    }

    @Test
    void repair_crashBeforeSync_leavesBlockBadAtItsOldPlace() throws IOException {
        long pbn = storeAndRot();
        assertThat(store.repair(pbn, fp(2), 0, block(2), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK)).isTrue();
        crash();
        assertThat(store.badBlocks().isBad(pbn)).as("an unsynced repair is lost as a whole").isTrue();
        assertThatThrownBy(() -> store.read(pbn, new StoredBlock())).isInstanceOf(CorruptBlockException.class);
        assertThat(readBack(3)).isEqualTo(block(3));
        // and a later repair still works
        assertThat(store.repair(pbn, fp(2), 0, block(2), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK)).isTrue();
        store.sync();
        crash();
        assertThat(store.badBlocks().isBad(pbn)).isFalse();
        assertThat(readBack(pbn)).isEqualTo(block(2));
    }

    @Test
    void forget_badBlock_clearsItsMark() throws IOException {
        long pbn = storeAndRot();
        store.forget(new long[] {pbn}, 1);
        assertThat(store.badBlocks().isBad(pbn)).isFalse();
        reopen();
        assertThat(store.badBlocks().isEmpty()).as("a freed block is no longer bad").isTrue();
    }

    @Test
    void compaction_damagedLiveRecord_marksBad_andCompactsOnceRepaired() throws IOException {
        db = MetadataDb.open(dir.resolve("catalog"));
        store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 16, FsyncPolicy.COMMIT, 16, 0), db);
        long[] pbns = new long[40];
        for (int i = 0; i < pbns.length; i++) {
            pbns[i] = store.append(fp(100 + i), 0, block(100 + i), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK);
        }
        store.sync();
        // log 1 holds the first ~15 blocks; free all of them but two, so it is worth compacting
        long keep = pbns[1];
        long rotted = pbns[3];
        long[] free = new long[pbns.length];
        int n = 0;
        for (int i = 0; i < 14; i++) {
            if (pbns[i] != keep && pbns[i] != rotted) {
                free[n++] = pbns[i];
            }
        }
        store.forget(free, n);
        StoredBlock b = new StoredBlock();
        store.fingerprint(rotted, b);
        assertThat(b.logId).isEqualTo(1);
        try (FileChannel ch = FileChannel.open(dir.resolve("data").resolve(DataLog.fileName(1)), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {0x55}), b.offset + FormatVersions.RECORD_HEADER_BYTES + 9);
        }
        Compactor.Result first = new Compactor(store).run(0.5, Long.MAX_VALUE);
        assertThat(first.logsSkippedCorrupt()).as("a damaged live record is never dropped: %s", first).isGreaterThanOrEqualTo(1);
        assertThat(store.badBlocks().isBad(rotted)).as("compaction marks it bad").isTrue();

        assertThat(store.repair(rotted, fp(103), 0, block(103), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK)).isTrue();
        store.sync();
        store.append(fp(999), 0, block(999), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK); // the durable point moves on
        store.sync();
        Compactor.Result second = new Compactor(store).run(0.5, Long.MAX_VALUE);
        assertThat(second.logsSkippedCorrupt()).as("the old copy is dead now: %s", second).isZero();
        assertThat(second.logsRewritten() + second.logsDeleted()).as("%s", second).isGreaterThanOrEqualTo(1);
        reopen();
        assertThat(readBack(rotted)).isEqualTo(block(103));
        assertThat(readBack(keep)).isEqualTo(block(101));
        assertThat(store.badBlocks().isEmpty()).isTrue();
    }

    /** mark is markAll of one: the same registry entry, listener call and no-op on a repeat, either way round. */
    @Test
    void mark_andMarkAllOfTheSameBlock_marksOnce_notifiesOnce_keepsItAcrossARestart() {
        open();
        java.util.List<Long> notified = new java.util.concurrent.CopyOnWriteArrayList<>();
        store.badBlocks().onMarked(notified::add);
        assertThat(store.badBlocks().mark(7, fp(7), 0, "log-x", "checked")).isTrue();
        assertThat(store.badBlocks().mark(7, fp(7), 0, "log-x", "checked")).isFalse();
        assertThat(store.badBlocks().markAll(java.util.List.of(new BadBlocks.Mark(7, fp(7), "log-x", "again"),
                new BadBlocks.Mark(8, fp(8), "log-y", "gone"), new BadBlocks.Mark(8, fp(8), "log-y", "gone")))).isEqualTo(1);
        assertThat(notified).containsExactly(7L, 8L);
        reopen();
        assertThat(store.badBlocks().all()).extracting(BadBlocks.BadBlock::pbn, BadBlocks.BadBlock::file, BadBlocks.BadBlock::problem)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(7L, "log-x", "checked"), org.assertj.core.groups.Tuple.tuple(8L, "log-y", "gone"));
        assertThat(store.badBlocks().holding(fp(7), 0)).isEqualTo(7);
    }
}
