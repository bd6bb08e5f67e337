package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Holes of a real sparse file on the test machine's file system, and the whole-file fallback. */
class SeekDataRegionsTest {
    static final long MIB = 1 << 20;
    static final long SIZE = 16 * MIB;

    @TempDir
    Path dir;
    Path sparse;

    @BeforeEach
    void makeSparseFile() throws Exception {
        sparse = sparseFile(dir.resolve("sparse.img"), SIZE, 1 * MIB, 5 * MIB);
    }

    /** A file of {@code size} bytes with 64 KiB of random data at each of {@code at}, holes elsewhere. */
    static Path sparseFile(Path file, long size, long... at) throws Exception {
        byte[] data = new byte[64 << 10];
        new Random(5).nextBytes(data);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
            for (long pos : at) {
                f.seek(pos);
                f.write(data);
            }
            f.getFD().sync();
        }
        return file;
    }

    @Test
    void nextDataAndHole_sparseFile_findsBothWrittenRegionsAndNothingAfter() {
        assumeTrue(SeekDataRegions.available(), "lseek(SEEK_DATA) needs Linux");
        try (DataRegions r = DataRegions.of(sparse, SIZE, false, false)) {
            assertThat(r.findsHoles()).isTrue();
            assertThat(r.nextHole(0)).isZero();
            assertThat(r.nextData(0)).isEqualTo(1 * MIB);
            assertThat(r.nextHole(1 * MIB)).isEqualTo(1 * MIB + (64 << 10));
            assertThat(r.nextData(1 * MIB + (64 << 10))).isEqualTo(5 * MIB);
            assertThat(r.nextData(5 * MIB + 100)).isEqualTo(5 * MIB + 100);
            assertThat(r.nextHole(5 * MIB)).isEqualTo(5 * MIB + (64 << 10));
            assertThat(r.nextData(5 * MIB + (64 << 10))).isEqualTo(DataRegions.NO_MORE_DATA);
            assertThat(r.nextData(SIZE)).isEqualTo(DataRegions.NO_MORE_DATA);
        }
    }

    @Test
    void nextHole_denseFile_isTheEnd() throws Exception {
        assumeTrue(SeekDataRegions.available(), "lseek(SEEK_DATA) needs Linux");
        Path dense = dir.resolve("dense.img");
        byte[] b = new byte[300_000];
        new Random(6).nextBytes(b);
        Files.write(dense, b);
        try (DataRegions r = DataRegions.of(dense, b.length, false, false)) {
            assertThat(r.nextData(0)).isZero();
            assertThat(r.nextHole(0)).isEqualTo(b.length);
            assertThat(r.nextHole(123_456)).isEqualTo(b.length);
        }
    }

    @Test
    void of_readHolesOrBlockDevice_wholeFileFallbackReportsAllData() {
        for (DataRegions r : new DataRegions[] {DataRegions.of(sparse, SIZE, false, true), DataRegions.of(sparse, SIZE, true, false)}) {
            try (r) {
                assertThat(r.findsHoles()).isFalse();
                assertThat(r.nextData(0)).isZero();
                assertThat(r.nextData(3 * MIB)).isEqualTo(3 * MIB);
                assertThat(r.nextHole(0)).isEqualTo(SIZE);
                assertThat(r.nextData(SIZE)).isEqualTo(DataRegions.NO_MORE_DATA);
            }
        }
    }

    @Test
    void of_unreadablePath_fallsBackToWholeFile() {
        try (DataRegions r = DataRegions.of(dir.resolve("missing.img"), SIZE, false, false)) {
            assertThat(r.findsHoles()).isFalse();
            assertThat(r.nextHole(0)).isEqualTo(SIZE);
        }
    }

    @Test
    void close_twice_isHarmless() {
        DataRegions r = DataRegions.of(sparse, SIZE, false, false);
        r.close();
        r.close();
        assertThat(r.nextData(SIZE)).isEqualTo(DataRegions.NO_MORE_DATA);
    }
}
