package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import java.util.stream.Stream;
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
    void flush_sparseFilter_fileGrowsWithInsertsNotWithSizing_andVersion1FileStillLoads() throws Exception {
        Path bdir = dir.resolve("bfc");
        byte[] f = fps(6, 1000);
        long bits;
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 1_000_000, 0.01)) {
            bfc.addAll(f, 0, 1000);
            bits = bfc.bitsPerFilter();
        }
        Path file;
        try (Stream<Path> files = Files.list(bdir)) {
            file = files.filter(p -> p.toString().endsWith(".bloom")).findFirst().orElseThrow();
        }
        byte[] v2 = Files.readAllBytes(file);
        assertThat(bits / 8).isGreaterThan(1 << 20); // sized for a million fingerprints
        assertThat(v2.length).as("version 2 file of 1,000 inserts").isLessThan(64 << 10);
        assertThat(java.nio.ByteBuffer.wrap(v2).getInt(4)).isEqualTo(BloomFilterChain.VERSION);
        // the same filter in version 1 (raw bits) loads as well
        byte[] raw = com.github.luben.zstd.Zstd.decompress(java.util.Arrays.copyOfRange(v2, 48, v2.length - 4), (int) (bits / 8));
        java.nio.ByteBuffer v1 = java.nio.ByteBuffer.allocate(48 + raw.length + 4);
        v1.put(v2, 0, 48).putInt(4, BloomFilterChain.VERSION_1).position(48);
        v1.put(raw);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(v1.array(), 0, v1.position());
        v1.putInt((int) crc.getValue());
        Files.write(file, v1.array());
        try (BloomFilterChain bfc = new BloomFilterChain(bdir, clock, DAY, 4, 1_000_000, 0.01)) {
            assertThat(present(bfc, f, 1000)).isEqualTo(1000);
            assertThat(present(bfc, fps(7, 1000), 1000)).isLessThan(50);
        }
    }
}
