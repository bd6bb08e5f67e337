package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.holdfast.server.store.StoreException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BloomFilterChainTest {
    private static final long DAY = Duration.ofDays(1).toMillis();

    @TempDir
    Path dir;

    private final SteppingClock clock = new SteppingClock(Instant.parse("2026-03-01T00:00:00Z"));

    private static byte[] fps(long seed, int n) {
        byte[] b = new byte[n * 32];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static int present(BloomFilterChain bfc, byte[] f, int n) {
        int c = 0;
        for (int i = 0; i < n; i++) {
            if (bfc.mightContain(f, i)) {
                c++;
            }
        }
        return c;
    }

    @Test
    void advance_pastLastPeriod_dropsOldestFilterWhole() {
        BloomFilterChain bfc = new BloomFilterChain(null, clock, DAY, 3, 10_000, 0.01);
        byte[] day0 = fps(1, 1000);
        bfc.addAll(day0, 0, 1000);
        clock.advance(Duration.ofDays(1));
        bfc.advance();
        byte[] day1 = fps(2, 1000);
        bfc.addAll(day1, 0, 1000);
        clock.advance(Duration.ofDays(1));
        bfc.advance();
        assertThat(present(bfc, day0, 1000)).isEqualTo(1000);
        assertThat(bfc.liveFilters()).isEqualTo(3);
        clock.advance(Duration.ofDays(1));
        bfc.advance();
        // Day 0 fell out of the 3-day window; day 1 is still there.
        assertThat(present(bfc, day0, 1000)).isLessThan(50);
        assertThat(present(bfc, day1, 1000)).isEqualTo(1000);
        assertThat(bfc.liveFilters()).isEqualTo(3);
    }

    @Test
    void mightContain_filledToDesign_falsePositiveRateNearEstimateAndTarget() {
        BloomFilterChain bfc = new BloomFilterChain(null, clock, DAY, 1, 100_000, 0.01);
        bfc.addAll(fps(3, 100_000), 0, 100_000);
        int probes = 200_000;
        int fp = present(bfc, fps(4, probes), probes);
        double measured = (double) fp / probes;
        double estimate = bfc.falsePositiveRate();
        assertThat(measured).isLessThan(0.02);
        assertThat(measured).isBetween(estimate * 0.5, estimate * 2.0);
        assertThat(bfc.fill()).isBetween(0.05, 0.6);
    }

    @Test
    void flush_thenReopen_keepsFiltersAndTornFileIsSkipped() throws Exception {
        Path bdir = dir.resolve("bfc");
        byte[] f = fps(5, 500);
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 10_000, 0.01)) {
            bfc.addAll(f, 0, 500);
        }
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 10_000, 0.01)) {
            assertThat(present(bfc, f, 500)).isEqualTo(500);
        }
        try (Stream<Path> files = Files.list(bdir)) {
            Path file = files.filter(p -> p.toString().endsWith(".bloom")).findFirst().orElseThrow();
            byte[] data = Files.readAllBytes(file);
            data[100] ^= 1;
            Files.write(file, data);
        }
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 10_000, 0.01)) {
            assertThat(present(bfc, f, 500)).isLessThan(50);
        }
    }

    @Test
    void flush_sparseFilter_fileRiceCodedGrowsWithInserts_andVersion1FileStillLoads() throws Exception {
        Path bdir = dir.resolve("bfc");
        byte[] f = fps(6, 1000);
        long bits;
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 1_000_000, 0.01)) {
            bfc.addAll(f, 0, 1000);
            bits = bfc.bitsPerFilter();
        }
        Path file = onlyBloomFile(bdir);
        byte[] v3 = Files.readAllBytes(file);
        assertThat(bits / 8).isGreaterThan(1 << 20); // sized for a million fingerprints
        assertThat(v3.length).as("version 3 file of 1,000 inserts (12 bits each)").isLessThan(24 << 10);
        assertThat(ByteBuffer.wrap(v3).getInt(4)).isEqualTo(BloomFilterChain.VERSION);
        assertThat(v3[48]).as("Rice-coded").isEqualTo((byte) BloomBitsCoder.CODING_RICE);
        // the same filter in version 1 (raw bits) loads as well
        long[] words = bitsOfFile(v3, bits);
        ByteBuffer v1 = ByteBuffer.allocate(48 + words.length * 8 + 4);
        v1.put(v3, 0, 48).putInt(4, BloomFilterChain.VERSION_1).position(48);
        v1.asLongBuffer().put(words);
        v1.position(48 + words.length * 8);
        CRC32C crc = new CRC32C();
        crc.update(v1.array(), 0, v1.position());
        v1.putInt((int) crc.getValue());
        Files.write(file, v1.array());
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 1_000_000, 0.01)) {
            assertThat(present(bfc, f, 1000)).isEqualTo(1000);
            assertThat(present(bfc, fps(7, 1000), 1000)).isLessThan(50);
        }
    }

    private static Path onlyBloomFile(Path bdir) throws Exception {
        try (Stream<Path> files = Files.list(bdir)) {
            return files.filter(p -> p.toString().endsWith(".bloom")).findFirst().orElseThrow();
        }
    }

    private static long[] bitsOfFile(byte[] file, long bits) {
        long[] words = new long[(int) (bits / 64)];
        assertThat(ByteBuffer.wrap(file).getInt(4)).isEqualTo(BloomFilterChain.VERSION);
        assertThat(BloomBitsCoder.decode(file, 48, file.length - 52, words)).as("version 3 body decodes").isTrue();
        return words;
    }

    /**
     * A flush writes only the filters that changed since they were written: an earlier day's file is
     * left as it is (same inode), today's is replaced; nothing is lost by the skip (every day's
     * fingerprints are there after a reopen), and a write that failed is tried again at the next flush.
     */
    @Test
    void flush_writesOnlyChangedFilters_skipLosesNothing_failedWriteRetried() throws Exception {
        Path bdir = dir.resolve("bfc");
        byte[] day0 = fps(10, 2000);
        byte[] day1 = fps(11, 2000);
        byte[] more = fps(12, 2000);
        Path file0;
        Path file1;
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 3, 100_000, 0.01)) {
            bfc.addAll(day0, 0, 2000);
            bfc.flush();
            file0 = onlyBloomFile(bdir);
            clock.advance(Duration.ofDays(1));
            bfc.advance();
            bfc.addAll(day1, 0, 1000);
            bfc.flush();
            file1 = bdir.resolve(String.format("%016x.bloom", bfc.currentPeriod()));
            Object key0 = inode(file0);
            Object key1 = inode(file1);
            bfc.flush(); // nothing changed: nothing written
            assertThat(inode(file0)).isEqualTo(key0);
            assertThat(inode(file1)).isEqualTo(key1);
            bfc.addAll(day1, 1000, 2000);
            bfc.flush(); // today's changed: only today's written
            assertThat(inode(file0)).as("day 0's file, unchanged").isEqualTo(key0);
            assertThat(inode(file1)).as("today's file, replaced").isNotEqualTo(key1);
            // a write that fails (its temporary name taken by a directory) leaves the filter to the next flush
            bfc.addAll(more, 0, 2000);
            Path blocker = Files.createDirectories(bdir.resolve(file1.getFileName() + ".tmp").resolve("x"));
            assertThatThrownBy(bfc::flush).isInstanceOf(StoreException.class);
            Files.delete(blocker);
            Files.delete(blocker.getParent());
        }
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 3, 100_000, 0.01)) {
            assertThat(present(bfc, day0, 2000)).isEqualTo(2000);
            assertThat(present(bfc, day1, 2000)).isEqualTo(2000);
            assertThat(present(bfc, more, 2000)).as("written by the close after the failed flush").isEqualTo(2000);
        }
    }

    private static Object inode(Path p) throws Exception {
        return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
    }

    /** The checked-in version 2 file (fixtures/bloom-v2/README.txt) loads with exactly its bits. */
    @Test
    void v2Fixture_loadsWithTheSameBits() throws Exception {
        Path bdir = Files.createDirectories(dir.resolve("bfc"));
        byte[] v2;
        try (var in = getClass().getResourceAsStream("/fixtures/bloom-v2/0000000000005021.bloom")) {
            v2 = in.readAllBytes();
        }
        assertThat(ByteBuffer.wrap(v2).getInt(4)).isEqualTo(BloomFilterChain.VERSION_2);
        long[] expected = new long[32768 / 64];
        assertThat(BloomBitsCoder.decodeZstd(v2, 48, v2.length - 52, expected)).isTrue();
        Files.write(bdir.resolve("0000000000005021.bloom"), v2);
        byte[] f = new byte[1500 * 32];
        new Random(14).nextBytes(f);
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 2000, 0.01)) {
            assertThat(bfc.bitsPerFilter()).isEqualTo(32768);
            assertThat(bfc.currentPeriod()).isEqualTo(0x5021);
            assertThat(present(bfc, f, 1500)).isEqualTo(1500);
        }
        // closing rewrote it as version 3 from the bits it loaded: the same bits and count
        byte[] v3 = Files.readAllBytes(bdir.resolve("0000000000005021.bloom"));
        assertThat(bitsOfFile(v3, 32768)).isEqualTo(expected);
        assertThat(Arrays.copyOfRange(v3, 8, 48)).isEqualTo(Arrays.copyOfRange(v2, 8, 48));
    }

    /**
     * A flipped bit or a cut file is skipped whole (the checksum); with the checksum forged to match,
     * the decoder's own checks skip it or it loads as a valid filter, and load never throws.
     */
    @Test
    void load_flippedTruncatedOrForgedFiles_skippedOrValidNeverThrow() throws Exception {
        Path bdir = dir.resolve("bfc");
        byte[] f = fps(8, 2000);
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 2, 100_000, 0.01)) {
            bfc.addAll(f, 0, 2000);
        }
        Path file = onlyBloomFile(bdir);
        byte[] original = Files.readAllBytes(file);
        assertThat(original[48]).isEqualTo((byte) BloomBitsCoder.CODING_RICE);
        Path emptyDir = dir.resolve("empty");
        try (BloomFilterChain bfc = new BloomFilterChain(emptyDir, clock, DAY, 2, 100_000, 0.01)) {
            assertThat(bfc.liveFilters()).isEqualTo(1);
        }
        byte[] empty = Files.readAllBytes(onlyBloomFile(emptyDir));
        Random rnd = new Random(9);
        int skipped = 0;
        int forgedSkipped = 0;
        for (int i = 0; i < 300; i++) {
            byte[] d;
            if (i % 2 == 0) {
                d = original.clone();
                int bit = rnd.nextInt(d.length * 8);
                d[bit >>> 3] ^= (byte) (0x80 >>> (bit & 7));
            } else {
                d = Arrays.copyOf(original, rnd.nextInt(original.length));
            }
            boolean forged = i % 3 == 2 && d.length >= 52;
            if (forged) {
                CRC32C crc = new CRC32C();
                crc.update(d, 0, d.length - 4);
                ByteBuffer.wrap(d).putInt(d.length - 4, (int) crc.getValue());
            }
            try (Stream<Path> files = Files.list(bdir)) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    Files.delete(p);
                }
            }
            Files.write(file, d);
            // opening loads it or skips it (an empty filter for the period then); closing writes what it holds
            try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 2, 100_000, 0.01)) {
                assertThat(bfc.liveFilters()).isPositive();
            }
            byte[] after = Files.readAllBytes(file);
            if (Arrays.equals(after, empty)) {
                skipped++;
                forgedSkipped += forged ? 1 : 0;
            } else {
                // a forged checksum over a flip the gap code cannot see (a low gap bit) loads other bits
                assertThat(forged).as("mutation %d loaded without a forged checksum", i).isTrue();
                assertThat(after).as("rewritten from valid bits").isNotEqualTo(original);
                assertThat(Arrays.stream(bitsOfFile(after, 1 << 20)).map(Long::bitCount).sum()).isPositive();
            }
        }
        assertThat(skipped - forgedSkipped).as("every mutation the checksum sees").isEqualTo(200);
        assertThat(forgedSkipped).as("forged: every cut and the flips that break the code").isGreaterThan(50);
    }
}
