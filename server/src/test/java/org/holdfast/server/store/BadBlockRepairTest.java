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
}
