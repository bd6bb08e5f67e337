package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.DataFailed;
import org.holdfast.common.protocol.DataRepair;
import org.holdfast.common.protocol.DataStored;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.server.store.CorruptBlockException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker's end of DATA_REPAIR against a real range store on disk: a block whose record was rotted in
 * its log is repaired in place at the next sync and reads back sound after a restart; a crash between
 * the append and the sync leaves the damaged copy and its mark (nothing wrong is served); a foreign PBN,
 * one the worker does not hold and an upload of other content are refused with nothing changed.
 */
class RangeBlockRepairTest {
    private static final int BS = 4096;
    private static final PbnRange RANGE = new PbnRange(1L << 32, (1L << 32) + (1L << 20));

    @TempDir
    Path dir;

    private MetadataDb db;
    private DataStore store;
    private final BlockCodec codec = new BlockCodec();
    private final RangeBlockRepair repair = new RangeBlockRepair(RANGE);

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
        if (db != null) {
            db.close();
        }
        codec.close();
    }

    private void open() {
        db = MetadataDb.open(dir.resolve("catalog"));
        store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 256L << 20, FsyncPolicy.COMMIT, 16, 0, RANGE), db);
    }

    private static byte[] block(long seed) {
        byte[] b = new byte[BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] fp(byte[] block) {
        byte[] f = new byte[32];
        BlockHasher.forCurrentThread().sha256(block, 0, block.length, f, 0);
        return f;
    }

    /** Stores three blocks, syncs, and flips a byte of the second one's record in its log (not read since): its PBN. */
    private long storeAndRot() throws IOException {
        open();
        long first = 0;
        for (int i = 1; i <= 3; i++) {
            long p = store.append(fp(block(i)), 0, block(i), 0, BS, FormatVersions.CODEC_RAW, BS);
            first = first == 0 ? p : first;
        }
        store.sync();
        byte[] b = block(2);
        try (Stream<Path> logs = Files.list(dir.resolve("data"))) {
            for (Path f : logs.filter(Files::isRegularFile).toList()) {
                byte[] content = Files.readAllBytes(f);
                for (int i = 0; i + BS <= content.length; i++) {
                    if (content[i] == b[0] && Arrays.equals(content, i, i + BS, b, 0, BS)) {
                        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                            ch.write(ByteBuffer.wrap(new byte[] {(byte) ~content[i + 100]}), i + 100);
                        }
                    }
                }
            }
        }
        return first + 1;
    }

    private DataRepair request(long pbn, byte[] block) {
        return new DataRepair(7, pbn, PayloadCodec.RAW, BS, fp(block), block);
    }

    private byte[] readBack(long pbn) {
        StoredBlock b = new StoredBlock();
        store.read(pbn, b);
        return Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength());
    }

    private long logBytes() throws IOException {
        try (Stream<Path> logs = Files.list(dir.resolve("data"))) {
            long sum = 0;
            for (Path f : logs.filter(Files::isRegularFile).toList()) {
                sum += Files.size(f);
            }
            return sum;
        }
    }

    @Test
    void repair_rottedBlock_repairedInPlaceAtSync_soundAfterRestart() throws IOException {
        long pbn = storeAndRot();
        Message m = repair.repair(store, request(pbn, block(2)), codec);
        assertThat(m).as("the worker found the block damaged itself, then appended the copy").isEqualTo(new DataStored(7, pbn, 1));
        assertThat(store.badBlocks().isBad(pbn)).as("marked here; the mark goes with the sync").isTrue();
        store.sync();
        assertThat(store.badBlocks().isBad(pbn)).isFalse();
        assertThat(readBack(pbn)).isEqualTo(block(2));
        store.close();
        db.close();
        open();
        assertThat(readBack(pbn)).as("the same PBN, sound after a restart").isEqualTo(block(2));
        assertThat(readBack(pbn - 1)).isEqualTo(block(1));
        assertThat(readBack(pbn + 1)).isEqualTo(block(3));
        assertThat(repair.repair(store, request(pbn, block(2)), codec)).as("sound now: answered repaired, nothing written")
                .isEqualTo(new DataStored(7, pbn, 1));
    }

    @Test
    void repair_crashBetweenAppendAndSync_leavesTheDamagedCopyMarked_andServesNothingWrong() throws IOException {
        long pbn = storeAndRot();
        assertThat(repair.repair(store, request(pbn, block(2)), codec)).isInstanceOf(DataStored.class);
        db.close(); // the worker dies before DATA_SYNC: nothing more is written
        db = null;
        store = null;
        open();
        assertThat(store.badBlocks().isBad(pbn)).as("the mark stays").isTrue();
        assertThatThrownBy(() -> store.read(pbn, new StoredBlock())).as("the damaged copy is never served")
                .isInstanceOf(CorruptBlockException.class);
        // the next backup's repair goes through
        assertThat(repair.repair(store, request(pbn, block(2)), codec)).isInstanceOf(DataStored.class);
        store.sync();
        assertThat(readBack(pbn)).isEqualTo(block(2));
    }

    @Test
    void repair_foreignUnknownOrOtherContent_refusedAndNothingChanged() throws IOException {
        long pbn = storeAndRot();
        long next = store.nextPbn();
        long bytes = logBytes();
        assertThat(refusal(repair.repair(store, request(RANGE.limit() + 5, block(2)), codec)))
                .contains("PBN " + (RANGE.limit() + 5) + " is outside this worker's range").contains("nothing changed");
        assertThat(refusal(repair.repair(store, request(RANGE.first() + 500, block(2)), codec)))
                .contains("holds no block PBN " + (RANGE.first() + 500));
        assertThat(refusal(repair.repair(store, request(pbn, block(9)), codec))).contains("another fingerprint");
        store.sync();
        assertThat(store.nextPbn()).isEqualTo(next);
        assertThat(logBytes()).as("nothing appended").isEqualTo(bytes);
        assertThatThrownBy(() -> store.read(pbn, new StoredBlock())).isInstanceOf(CorruptBlockException.class);
        assertThat(readBack(pbn - 1)).isEqualTo(block(1));
    }

    private static String refusal(Message m) {
        assertThat(m).isInstanceOf(DataFailed.class);
        return ((DataFailed) m).message();
    }
}
