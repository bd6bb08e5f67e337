package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.compress.BlockCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Frame records (data log v2): append, read, batch read, recovery, damage, repair. */
class DataStoreFrameTest {
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    private MetadataDb db;
    private DataStore store;
    private final BlockCodec codec = new BlockCodec();

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
        store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 256L << 20, FsyncPolicy.COMMIT, 16, 0), db);
    }

    private void reopen() {
        store.close();
        db.close();
        open();
    }

    /** A compressible block: 200 random bytes, then a run of one value. */
    static byte[] block(long seed) {
        byte[] b = new byte[BLOCK];
        Random r = new Random(seed);
        r.nextBytes(b);
        Arrays.fill(b, 200, BLOCK, (byte) seed);
        return b;
    }

    static byte[] sha(byte[] b) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(b);
    }

    /** A frame of the blocks of {@code seeds}: the zstd frame and the fingerprints. */
    record Frame(byte[] zstd, byte[] fps, long[] seeds) {
    }

    Frame frame(long... seeds) throws Exception {
        byte[] raw = new byte[seeds.length * BLOCK];
        byte[] fps = new byte[seeds.length * 32];
        for (int k = 0; k < seeds.length; k++) {
            System.arraycopy(block(seeds[k]), 0, raw, k * BLOCK, BLOCK);
            System.arraycopy(sha(block(seeds[k])), 0, fps, k * 32, 32);
        }
        byte[] z = new byte[raw.length + 4096];
        int n = codec.compress(raw, 0, raw.length, z, 0);
        assertThat(n).isPositive();
        return new Frame(Arrays.copyOf(z, n), fps, seeds);
    }

    long append(Frame f) {
        return store.appendFrame(f.fps(), 0, f.seeds().length, f.zstd(), 0, f.zstd().length, BLOCK);
    }

    long appendSingle(long seed) throws Exception {
        return store.append(sha(block(seed)), 0, block(seed), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK);
    }

    void assertRead(long pbn, long seed) throws Exception {
        StoredBlock b = new StoredBlock();
        store.read(pbn, b);
        assertBlock(b, pbn, seed);
    }

    static void assertBlock(StoredBlock b, long pbn, long seed) throws Exception {
        assertThat(b.pbn()).isEqualTo(pbn);
        assertThat(b.codec()).isEqualTo(FormatVersions.CODEC_RAW);
        assertThat(b.storedLength()).isEqualTo(BLOCK);
        assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + BLOCK)).as("pbn %d", pbn).isEqualTo(block(seed));
        assertThat(b.fingerprint()).isEqualTo(sha(block(seed)));
    }

    private Path onlyLog() throws Exception {
        try (Stream<Path> s = Files.list(dir.resolve("data"))) {
            return s.filter(p -> DataLog.parseId(p.getFileName().toString()) >= 0).reduce((a, b) -> b).orElseThrow();
        }
    }

    @Test
    void appendFrame_readsBackEveryMemberBeforeAndAfterSyncAndReopen() throws Exception {
        open();
        Frame f = frame(10, 11, 12, 13, 14, 15, 16, 17);
        long first = append(f);
        assertThat(store.nextPbn()).isEqualTo(first + 8);
        for (int k = 0; k < 8; k++) {
            assertRead(first + k, 10 + k); // pending
        }
        store.sync();
        reopen();
        long before = store.regionsRead();
        StoredBlock b = new StoredBlock();
        for (int k = 7; k >= 0; k--) {
            store.read(first + k, b);
            assertBlock(b, first + k, 10 + k);
        }
        assertThat(store.regionsRead() - before).as("one buffer decodes the frame once for all its members").isEqualTo(1);
        StoredBlock fp = new StoredBlock(1);
        assertThat(store.fingerprint(first + 3, fp)).isTrue();
        assertThat(fp.fingerprint()).isEqualTo(sha(block(13)));
        assertThat(fp.storedLength()).as("a member's share of the frame").isEqualTo(f.zstd().length / 8);
        assertThat(store.locations().storedBytes(new long[] {first, first + 1}, 2)).isEqualTo(2L * (f.zstd().length / 8));
        try (DataLog log = DataLog.openReadOnly(onlyLog(), 1)) {
            assertThat(log.version()).isEqualTo(2);
        }
    }

    @Test
    void readBatch_mixedRecordsAndMembersInAndOutOfOrder_eachBlockDecodesToItsBytes() throws Exception {
        open();
        long s1 = appendSingle(1);
        long a = append(frame(20, 21, 22, 23));
        long s2 = appendSingle(2);
        store.sync();
        long b = append(frame(30, 31, 32)); // pending
        long[] pbns = {b + 2, s1, a, a + 3, b, a + 1, s2, a + 3, b + 1, a + 2, a};
        long[] seeds = {32, 1, 20, 23, 30, 21, 2, 23, 31, 22, 20};
        BlockBatch batch = new BlockBatch(16, 1 << 20, BLOCK);
        long before = store.regionsRead();
        assertThat(store.readBatch(pbns, 0, pbns.length, batch)).isEqualTo(pbns.length);
        assertThat(batch.records).as("each frame read once: 2 frames, 2 block records").isEqualTo(4);
        assertThat(store.regionsRead() - before).isLessThanOrEqualTo(4);
        byte[] out = new byte[BLOCK];
        for (int i = 0; i < pbns.length; i++) {
            assertThat(batch.pbn(i)).isEqualTo(pbns[i]);
            batch.decode(i, codec, out, 0);
            assertThat(out).as("block %d (pbn %d)", i, pbns[i]).isEqualTo(block(seeds[i]));
            assertThat(Arrays.copyOfRange(batch.fingerprints(), batch.fingerprintOffset(i), batch.fingerprintOffset(i) + 32))
                    .isEqualTo(sha(block(seeds[i])));
            assertThat(batch.rawLength(i)).isEqualTo(BLOCK);
        }
        assertThat(batch.codec(1)).isEqualTo(FormatVersions.CODEC_RAW);
        assertThat(batch.codec(0)).isEqualTo(FormatVersions.CODEC_FRAME);
        assertThat(batch.frameMembers(0)).isEqualTo(3);
        assertThat(batch.memberIndex(0)).isEqualTo(2);
        assertThat(batch.memberIndex(3)).isEqualTo(3);
        assertThat(batch.frameLogId(2)).isEqualTo(batch.frameLogId(3));
        assertThat(batch.frameOffset(2)).isEqualTo(batch.frameOffset(3)).isNotEqualTo(batch.frameOffset(0));
        // the frame's stored bytes are the zstd frame as appended
        byte[] z = Arrays.copyOfRange(batch.data(), batch.dataOffset(2), batch.dataOffset(2) + batch.storedLength(2));
        byte[] raw = new byte[4 * BLOCK];
        codec.decompress(z, 0, z.length, raw, 0, raw.length);
        assertThat(Arrays.copyOfRange(raw, 3 * BLOCK, 4 * BLOCK)).isEqualTo(block(23));
    }

    @Test
    void readBatch_frameLargerThanTheBuffer_growsItOnce() throws Exception {
        open();
        byte[] raw = new byte[8 * BLOCK];
        new Random(5).nextBytes(raw);
        for (int k = 0; k < 8; k++) {
            Arrays.fill(raw, k * BLOCK + 2048, (k + 1) * BLOCK, (byte) k); // half random: about 2 KiB each compressed
        }
        byte[] fps = new byte[8 * 32];
        for (int k = 0; k < 8; k++) {
            System.arraycopy(sha(Arrays.copyOfRange(raw, k * BLOCK, (k + 1) * BLOCK)), 0, fps, k * 32, 32);
        }
        byte[] z = new byte[raw.length + 4096];
        int n = codec.compress(raw, 0, raw.length, z, 0);
        assertThat(n).isGreaterThan(2 * BLOCK);
        long first = store.appendFrame(fps, 0, 8, z, 0, n, BLOCK);
        store.sync();
        BlockBatch batch = new BlockBatch(4, 2 * BLOCK, BLOCK);
        long[] pbns = {first + 6, first + 7, first};
        assertThat(store.readBatch(pbns, 0, 3, batch)).isEqualTo(3);
        byte[] out = new byte[BLOCK];
        batch.decode(2, codec, out, 0);
        assertThat(out).isEqualTo(Arrays.copyOf(raw, BLOCK));
        batch.decode(0, codec, out, 0);
        assertThat(out).isEqualTo(Arrays.copyOfRange(raw, 6 * BLOCK, 7 * BLOCK));
    }

    @Test
    void recovery_tornFrameAtTheTail_isDroppedAndItsPbnsNeverReturn() throws Exception {
        open();
        long kept = append(frame(1, 2, 3));
        store.sync();
        Path log = onlyLog();
        long durable = Files.size(log);
        long lost = append(frame(4, 5, 6, 7));
        // the process dies: the database closes (its WAL is durable), the log's buffer is lost
        db.close();
        db = null;
        store = null;
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "rw")) {
            f.seek(f.length());
            byte[] half = Arrays.copyOf(frame(4, 5, 6, 7).zstd(), 300); // half a frame record reached the disk
            f.write(half);
        }
        open();
        assertThat(store.recovery().droppedTailBytes()).isEqualTo(300);
        assertThat(Files.size(log)).isEqualTo(durable);
        for (int k = 0; k < 3; k++) {
            assertRead(kept + k, 1 + k);
        }
        assertThatThrownBy(() -> store.read(lost, new StoredBlock())).isInstanceOf(CorruptDataException.class);
        long next = append(frame(8, 9));
        assertThat(next).isGreaterThan(lost + 3);
        store.sync();
        assertRead(next + 1, 9);
    }

    @Test
    void bitFlipInAFrame_everyMemberReadFailsNamingItsPbn_neverWrongBytes() throws Exception {
        open();
        long before = appendSingle(1);
        long first = append(frame(40, 41, 42, 43, 44));
        store.sync();
        long[] at = new long[1];
        int[] len = new int[1];
        store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
            if (pbn == first) {
                at[0] = offset;
                len[0] = FrameFormat.recordStored(location);
            }
            return true;
        });
        try (RandomAccessFile f = new RandomAccessFile(onlyLog().toFile(), "rw")) {
            long p = at[0] + FormatVersions.RECORD_HEADER_BYTES + len[0] / 2;
            f.seek(p);
            int b = f.read();
            f.seek(p);
            f.write(b ^ 0x08);
        }
        for (int k = 0; k < 5; k++) {
            long pbn = first + k;
            assertThatThrownBy(() -> store.read(pbn, new StoredBlock())).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("pbn " + pbn).hasMessageContaining("checksum");
        }
        assertThat(store.badBlocks().count()).as("every member is marked bad").isEqualTo(5);
        long[] pbns = {before, first + 2, first};
        assertThatThrownBy(() -> store.readBatch(pbns, 0, 3, new BlockBatch(8, 1 << 20, BLOCK)))
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("pbn " + (first + 2));
        assertRead(before, 1);

        // a member is repaired as a block record of its own; the others stay bad
        assertThat(store.repair(first + 1, sha(block(41)), 0, block(41), 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK)).isTrue();
        store.sync();
        assertRead(first + 1, 41);
        assertThat(store.badBlocks().isBad(first + 1)).isFalse();
        assertThatThrownBy(() -> store.read(first, new StoredBlock())).isInstanceOf(CorruptDataException.class);
    }

    @Test
    void memberNotMatchingItsFingerprint_readFailsNamingIt() throws Exception {
        open();
        Frame f = frame(50, 51, 52);
        byte[] lie = f.fps().clone();
        lie[32 + 5] ^= 1; // the caller's check is bypassed: the store still never returns other bytes
        long first = store.appendFrame(lie, 0, 3, f.zstd(), 0, f.zstd().length, BLOCK);
        store.sync();
        assertRead(first, 50);
        assertThatThrownBy(() -> store.read(first + 1, new StoredBlock())).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("pbn " + (first + 1)).hasMessageContaining("fingerprint");
        assertRead(first + 2, 52);
    }

    @Test
    void appendFrame_badArguments_refusedWithNothingAppended() throws Exception {
        open();
        Frame f = frame(1, 2);
        long next = store.nextPbn();
        assertThatThrownBy(() -> store.appendFrame(f.fps(), 0, 0, f.zstd(), 0, f.zstd().length, BLOCK))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.appendFrame(f.fps(), 0, 512, f.zstd(), 0, f.zstd().length, BLOCK))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1048576");
        assertThatThrownBy(() -> store.appendFrame(f.fps(), 0, 2, f.zstd(), 0, 1 << 20, BLOCK))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(store.nextPbn()).isEqualTo(next);
    }
}
