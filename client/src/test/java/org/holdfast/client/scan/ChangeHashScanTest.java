package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.Images;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.protocol.ProtocolLimits;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cheap change hashes through the real scan pipeline: the format 1 fixture still read and
 * upgraded, stored SHA-256 values kept only for blocks whose cheap hash is unchanged, and what a
 * cheap-hash collision costs (a missed change until the next full re-hash).
 */
class ChangeHashScanTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    /** What one scan reported: the changed LBNs and the blocks it SHA-256 hashed. */
    record Scan(List<Long> changed, long sha256Blocks) {
    }

    /**
     * Scans {@code image} against {@code prev} (null: full), keeping stored SHA-256 values when
     * {@code reuse}, and commits a format 2 state to {@code out} under {@code hash}.
     */
    private static Scan scan(Path image, long size, StateFile.PreviousState prev, boolean reuse, ChangeHash hash, Path out)
            throws Exception {
        long blocks = ProtocolLimits.blockCount(size, BS);
        List<Long> changed = new ArrayList<>();
        BlockReader.ChangeHashing hashing = new BlockReader.ChangeHashing(hash, reuse ? prev.cursor() : null);
        VolumeScanner.Result res;
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ);
             StateFile.Writer w = StateFile.Writer.create(out, BS, size, new StateFile.ChangeHashes(hash.seed(), 0, 0));
             BlockReader r = new BlockReader(ch::read, size, BS, ChangedBlockList.all(blocks), 16 * BS, 3, 2,
                     DataRegions.wholeFile(size), null, hashing)) {
            res = VolumeScanner.scan(r, new ChangeDetector(prev), prev, w, blocks, BS,
                    (lbn, fps, off, data, dOff, zero, tag) -> changed.add(lbn), b -> { });
            w.commit(prev == null ? 1 : prev.sequence() + 1, 0);
        }
        return new Scan(changed, res.sha256Blocks());
    }

    private static StateFile.PreviousState load(Path p) {
        StateFile.Loaded l = StateFile.load(p);
        assertThat(l.trusted()).as(l.reason()).isTrue();
        return l.state();
    }

    /**
     * The fixture was written by the format 1 writer of the release before format 2 (main at
     * e149f40): 41 blocks of the image {@code Images.create(size 40 x 4096 + 100, seed 11, every 5th
     * block zero)}, sequence 3.
     */
    @Test
    void load_formatOneFixture_readsAndUpgradesToFormatTwo() throws Exception {
        long size = 40L * BS + 100;
        Path image = Images.create(dir.resolve("fix.img"), size, BS, 11, 5);
        Path v1 = dir.resolve("v1.state");
        try (InputStream in = getClass().getResourceAsStream("/fixtures/state-v1.state")) {
            Files.copy(in, v1);
        }
        Path v2 = dir.resolve("v2.state");
        try (StateFile.PreviousState prev = load(v1)) {
            assertThat(prev.formatVersion()).isEqualTo(1);
            assertThat(prev.hasChangeHashes()).isFalse();
            assertThat(prev.sequence()).isEqualTo(3);
            assertThat(prev.volumeBytes()).isEqualTo(size);
            byte[] stored = new byte[41 * 32];
            prev.read(0, 41, stored, 0);
            assertThat(stored).isEqualTo(fingerprints(image, 41));
            // no cheap hashes yet: every block gets its SHA-256, and none is a change
            Scan s = scan(image, size, prev, false, ChangeHash.withRandomSeed(), v2);
            assertThat(s.changed()).isEmpty();
            assertThat(s.sha256Blocks()).isEqualTo(41 - 9);
        }
        Images.overwrite(image, 17, BS, 5);
        try (StateFile.PreviousState prev = load(v2)) {
            assertThat(prev.formatVersion()).isEqualTo(2);
            assertThat(Files.size(v2)).isEqualTo(StateFile.HEADER_BYTES_V2 + 41L * StateFile.ENTRY_BYTES_V2);
            Scan s = scan(image, size, prev, true, new ChangeHash(prev.changeHashes().seed()), dir.resolve("v2b.state"));
            assertThat(s.changed()).containsExactly(17L);
            assertThat(s.sha256Blocks()).isEqualTo(1);
        }
    }

    @Test
    void scan_collidingCheapHash_missedUntilFullRehash() throws Exception {
        long size = 64L * BS;
        Path image = Images.create(dir.resolve("c.img"), size, BS, 4, 0);
        ChangeHash hash = ChangeHash.withRandomSeed();
        Path s1 = dir.resolve("s1.state");
        scan(image, size, null, false, hash, s1);
        Images.overwrite(image, 30, BS, 77);
        Images.overwrite(image, 31, BS, 78);
        // simulate a collision at LBN 30: its stored cheap hash is that of the new content
        long[] newHash = new long[2];
        hash.hash(Files.readAllBytes(image), 30 * BS, BS, new long[2], newHash, 0);
        Path forged = dir.resolve("forged.state");
        try (StateFile.PreviousState prev = load(s1);
             StateFile.Writer w = StateFile.Writer.create(forged, BS, size, prev.changeHashes())) {
            byte[] fps = new byte[64 * 32];
            long[] hashes = new long[128];
            prev.read(0, 64, fps, 0, hashes, 0);
            hashes[60] = newHash[0];
            hashes[61] = newHash[1];
            w.append(fps, 0, hashes, 0, 64);
            w.commit(1, 0);
        }
        try (StateFile.PreviousState prev = load(forged)) {
            Scan cheap = scan(image, size, prev, true, hash, dir.resolve("s2.state"));
            assertThat(cheap.changed()).as("the documented trade-off: a collision hides the change").containsExactly(31L);
            assertThat(cheap.sha256Blocks()).isEqualTo(1);
            Scan full = scan(image, size, prev, false, hash, dir.resolve("s3.state"));
            assertThat(full.changed()).as("a full re-hash finds it").containsExactly(30L, 31L);
            assertThat(full.sha256Blocks()).isEqualTo(64);
        }
    }

    @Test
    void scan_everyKindOfChange_detectedWithCheapHashes() throws Exception {
        long size = 200L * BS + 5;
        Path image = Images.create(dir.resolve("k.img"), size, BS, 8, 6);
        ChangeHash hash = ChangeHash.withRandomSeed();
        Path s1 = dir.resolve("k1.state");
        scan(image, size, null, false, hash, s1);
        byte[] bytes = Files.readAllBytes(image);
        try (var f = new java.io.RandomAccessFile(image.toFile(), "rw")) {
            f.seek(3L * BS + 100); // one bit
            f.write(bytes[3 * BS + 100] ^ 0x01);
            f.seek(7L * BS); // data block to zeros
            f.write(new byte[BS]);
            f.seek(12L * BS + 9); // zero block to data
            f.write(1);
            f.seek(50L * BS); // rewritten with its own content: no change
            f.write(bytes, 50 * BS, BS);
            f.seek(200L * BS + 4); // the last, partial block
            f.write(bytes[200 * BS + 4] ^ 0x80);
        }
        try (StateFile.PreviousState prev = load(s1)) {
            Scan s = scan(image, size, prev, true, hash, dir.resolve("k2.state"));
            assertThat(s.changed()).containsExactly(3L, 7L, 12L, 200L);
            assertThat(s.sha256Blocks()).isEqualTo(3);
        }
    }

    private static byte[] fingerprints(Path image, int blocks) throws Exception {
        byte[] all = Files.readAllBytes(image);
        byte[] fps = new byte[blocks * 32];
        BlockHasher h = new BlockHasher();
        byte[] block = new byte[BS];
        for (int b = 0; b < blocks; b++) {
            java.util.Arrays.fill(block, (byte) 0);
            System.arraycopy(all, b * BS, block, 0, Math.min(BS, all.length - b * BS));
            h.fingerprint(block, 0, BS, fps, b * 32);
        }
        return fps;
    }
}
