package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringReader;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import org.holdfast.common.hash.BlockHasher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reader hands out every block's bytes, fingerprint and zero flag exactly, in LBN order. */
class BlockReaderTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    @Test
    void scan_wholeVolumeWithOddTail_everyBlockExact() throws Exception {
        int blocks = 1000; // several chunks of 64 blocks, last one short
        byte[] img = image(blocks * BS - 1000, 3);
        check(img, ChangedBlockList.all((img.length + BS - 1) / BS));
    }

    @Test
    void scan_changedExtentsOnly_readsJustThoseBlocks() throws Exception {
        byte[] img = image(700 * BS, 4);
        String list = "0 4096\n" + 100L * BS + " " + 130L * BS + "\n" + 600L * BS + " " + 100L * BS + "\n";
        ChangedBlockList extents = ChangedBlockList.parse(new java.io.BufferedReader(new StringReader(list)), "t", img.length, BS);
        long seen = check(img, extents);
        assertThat(seen).isEqualTo(1 + 130 + 100);
    }

    @Test
    void scan_sparseFile_holeBlocksZeroWithoutReadingDataBlocksExact() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(SeekDataRegions.available(), "lseek(SEEK_DATA) needs Linux");
        long size = 16L << 20;
        Path file = SeekDataRegionsTest.sparseFile(dir.resolve("s.img"), size, 1 << 20, 5L << 20);
        assertThat(sparseScan(file, size, BS)).isEqualTo(new long[] {2 * (64 << 10), size / BS - 2 * 16});
    }

    @Test
    void scan_sparseFileDataInsideLargeBlock_thatBlockReadWhole() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(SeekDataRegions.available(), "lseek(SEEK_DATA) needs Linux");
        int bs = 1 << 20;
        long size = 8L << 20;
        Path file = SeekDataRegionsTest.sparseFile(dir.resolve("s.img"), size, (3L << 20) + (512 << 10));
        assertThat(sparseScan(file, size, bs)).isEqualTo(new long[] {bs, 7});
    }

    /**
     * Scans a sparse file with hole skipping and checks every block against the file's bytes;
     * returns {source bytes read, hole blocks}.
     */
    private long[] sparseScan(Path file, long size, int bs) throws Exception {
        byte[] img = Files.readAllBytes(file);
        BlockHasher h = new BlockHasher();
        byte[] fp = new byte[32];
        long read = 0;
        long holes = 0;
        long lbns = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
             DataRegions regions = DataRegions.of(file, size, false, false);
             BlockReader r = new BlockReader(ch, size, bs, ChangedBlockList.all(size / bs), 4 * bs, 3, 2, regions, null)) {
            for (ScannedChunk c; (c = r.next()) != null; ) {
                for (int i = 0; i < c.blocks(); i++) {
                    long lbn = c.firstLbn() + i;
                    boolean zero = h.fingerprint(img, (int) (lbn * bs), bs, fp, 0);
                    assertThat(c.isZero(i)).as("zero flag of LBN %d", lbn).isEqualTo(zero);
                    assertThat(Arrays.copyOfRange(c.fingerprints(), i * 32, i * 32 + 32)).as("fingerprint of LBN %d", lbn)
                            .isEqualTo(fp);
                    lbns++;
                }
                read += c.sourceBytesRead();
                holes += c.holeBlocks();
                r.release(c);
            }
        }
        assertThat(lbns).isEqualTo(size / bs);
        return new long[] {read, holes};
    }

    /** Scans {@code img} through a reader with 256 KiB chunks and compares everything; returns blocks seen. */
    private long check(byte[] img, ChangedBlockList extents) throws Exception {
        Path file = dir.resolve("v.img");
        Files.write(file, img);
        BlockHasher h = new BlockHasher();
        byte[] block = new byte[BS];
        byte[] fp = new byte[32];
        long seen = 0;
        int extent = 0;
        long expectLbn = extents.extents() == 0 ? 0 : extents.start(0);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
             BlockReader r = new BlockReader(ch, img.length, BS, extents, 64 * BS, 3, 2)) {
            for (ScannedChunk c; (c = r.next()) != null; ) {
                for (int i = 0; i < c.blocks(); i++) {
                    long lbn = c.firstLbn() + i;
                    while (expectLbn >= extents.end(extent)) {
                        extent++;
                        expectLbn = extents.start(extent);
                    }
                    assertThat(lbn).isEqualTo(expectLbn);
                    expectLbn++;
                    Arrays.fill(block, (byte) 0);
                    int from = (int) (lbn * BS);
                    System.arraycopy(img, from, block, 0, Math.min(BS, img.length - from));
                    byte[] got = new byte[BS];
                    c.data().get(i * BS, got, 0, BS);
                    assertThat(got).as("bytes of LBN %d", lbn).isEqualTo(block);
                    boolean zero = h.fingerprint(block, 0, BS, fp, 0);
                    assertThat(c.isZero(i)).as("zero flag of LBN %d", lbn).isEqualTo(zero);
                    assertThat(Arrays.copyOfRange(c.fingerprints(), i * 32, i * 32 + 32)).as("fingerprint of LBN %d", lbn)
                            .isEqualTo(fp);
                    seen++;
                }
                r.release(c);
            }
        }
        return seen;
    }

    /** Random blocks, every seventh block zero. */
    private static byte[] image(int bytes, long seed) {
        byte[] b = new byte[bytes];
        new Random(seed).nextBytes(b);
        for (int lbn = 0; lbn * BS < bytes; lbn += 7) {
            Arrays.fill(b, lbn * BS, Math.min(bytes, (lbn + 1) * BS), (byte) 0);
        }
        return b;
    }
}
