package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.Zstd;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BloomBitsCoderTest {

    /** A blocked filter as the chain fills it: per insert one 512-bit block, k bits inside it. */
    private static long[] blocked(int words, int inserts, int k, long seed) {
        long[] f = new long[words];
        Random rnd = new Random(seed);
        int blocks = words / 8;
        for (int i = 0; i < inserts; i++) {
            int base = rnd.nextInt(blocks) * 8;
            for (int j = 0; j < k; j++) {
                int bit = rnd.nextInt(512);
                f[base + (bit >>> 6)] |= 1L << bit;
            }
        }
        return f;
    }

    private static long[] decoded(byte[] coded, int words) {
        long[] f = new long[words];
        assertThat(BloomBitsCoder.decode(coded, 0, coded.length, f)).as("decodes").isTrue();
        return f;
    }

    private static boolean decodes(byte[] coded, int words) {
        return BloomBitsCoder.decode(coded, 0, coded.length, new long[words]);
    }

    @Test
    void encode_empty_isRiceHeadOnlyAndRoundTrips() {
        long[] f = new long[1 << 14];
        byte[] c = BloomBitsCoder.encode(f);
        assertThat(c[0]).isEqualTo((byte) BloomBitsCoder.CODING_RICE);
        assertThat(c).hasSize(10);
        assertThat(decoded(c, f.length)).isEqualTo(f);
    }

    @Test
    void encode_sparse_isRiceSmallerThanZstdAndRoundTrips() {
        long[] f = blocked(1 << 14, 800, 11, 1); // 2^20 bits, about 0.8 % set
        byte[] c = BloomBitsCoder.encode(f);
        assertThat(c[0]).isEqualTo((byte) BloomBitsCoder.CODING_RICE);
        assertThat(c[1]).as("Rice parameter from the fill").isBetween((byte) 5, (byte) 7);
        ByteBuffer raw = ByteBuffer.allocate(f.length * 8);
        raw.asLongBuffer().put(f);
        assertThat(c.length).isLessThan(Zstd.compress(raw.array(), 1).length * 9 / 10);
        assertThat(decoded(c, f.length)).isEqualTo(f);
    }

    @Test
    void encode_nearHalfFullAndFull_fallBackToZstdAndRoundTrip() {
        int words = 1 << 12;
        long[] near = blocked(words, 11_000, 12, 2); // about 40 % set: zstd's byte codes win from about 20 %
        byte[] c = BloomBitsCoder.encode(near);
        assertThat(c[0]).isEqualTo((byte) BloomBitsCoder.CODING_ZSTD);
        assertThat(decoded(c, words)).isEqualTo(near);

        long[] half = new long[words];
        Random rnd = new Random(2);
        for (int i = 0; i < half.length; i++) {
            half[i] = rnd.nextLong();
        }
        // exactly half full and random, both codings are the raw size plus a few bytes; the smaller is taken
        c = BloomBitsCoder.encode(half);
        assertThat(c.length).isLessThanOrEqualTo(words * 8 + 16);
        assertThat(decoded(c, half.length)).isEqualTo(half);

        long[] full = new long[words];
        Arrays.fill(full, -1L);
        c = BloomBitsCoder.encode(full);
        assertThat(c[0]).isEqualTo((byte) BloomBitsCoder.CODING_ZSTD);
        assertThat(c.length).isLessThan(1024);
        assertThat(decoded(c, full.length)).isEqualTo(full);
    }

    /** Blocked inserts (k = 12) until {@code fill} of the bits are set. */
    private static long[] filledTo(int words, double fill, long seed) {
        long[] f = new long[words];
        Random rnd = new Random(seed);
        long set = 0;
        long want = (long) (fill * words * 64);
        int blocks = words / 8;
        while (set < want) {
            int base = rnd.nextInt(blocks) * 8;
            for (int j = 0; j < 12; j++) {
                int bit = rnd.nextInt(512);
                long m = 1L << bit;
                if ((f[base + (bit >>> 6)] & m) == 0) {
                    set++;
                    f[base + (bit >>> 6)] |= m;
                }
            }
        }
        return f;
    }

    /** Both codings by fill on 2^22 bits (docs/benchmarks.md, "Bloom filter file format 3"). */
    @Test
    void encode_byFill_roundTripsNeverLargerThanZstd_printsBoth() {
        int words = 1 << 16;
        StringBuilder table = new StringBuilder("BloomBitsCoderTest: 2^22 bits, k = 12\n| fill | written | bytes | zstd -1 |\n");
        for (double fill : new double[] {0.0001, 0.01, 0.04, 0.1, 0.15, 0.2, 0.4, 0.5, 0.75}) {
            long[] f = filledTo(words, fill, 1);
            byte[] c = BloomBitsCoder.encode(f);
            ByteBuffer raw = ByteBuffer.allocate(words * 8);
            raw.asLongBuffer().put(f);
            int z = Zstd.compress(raw.array(), 1).length;
            table.append(String.format("| %.2f %% | %s | %,d | %,d |%n", fill * 100, c[0] == BloomBitsCoder.CODING_RICE ? "Rice" : "zstd",
                    c.length, z));
            assertThat(c.length).as("fill %.4f", fill).isLessThanOrEqualTo(z + 1);
            assertThat(decoded(c, words)).as("fill %.4f", fill).isEqualTo(f);
            if (fill <= 0.15) {
                assertThat(c[0]).as("fill %.4f", fill).isEqualTo((byte) BloomBitsCoder.CODING_RICE);
                assertThat(c.length).as("fill %.4f", fill).isLessThan(z);
            }
        }
        System.out.print(table);
    }

    @Test
    void decode_lyingFields_refusedWithoutException() {
        int words = 1 << 10;
        long[] f = blocked(words, 100, 11, 3);
        f[words - 1] |= Long.MIN_VALUE;
        byte[] c = BloomBitsCoder.encode(f);
        assertThat(c[0]).isEqualTo((byte) BloomBitsCoder.CODING_RICE);
        long set = ByteBuffer.wrap(c).getLong(2);
        for (long lie : new long[] {set + 1, set - 1, 0, -1, Long.MAX_VALUE, Long.MIN_VALUE, words * 64L + 1}) {
            byte[] d = c.clone();
            ByteBuffer.wrap(d).putLong(2, lie);
            assertThat(decodes(d, words)).as("count %d", lie).isFalse();
        }
        for (int r : new int[] {BloomBitsCoder.MAX_RICE + 1, 63, 64, 255}) {
            byte[] d = c.clone();
            d[1] = (byte) r;
            assertThat(decodes(d, words)).as("r %d", r).isFalse();
        }
        byte[] unknown = c.clone();
        unknown[0] = 2;
        assertThat(decodes(unknown, words)).isFalse();
        // the last gap runs past a smaller filter
        assertThat(decodes(c, words / 2)).isFalse();
        // each truncation runs out of bits, trailing bytes are not padding
        for (int len = 0; len < c.length; len++) {
            assertThat(BloomBitsCoder.decode(c, 0, len, new long[words])).as("truncated to %d", len).isFalse();
        }
        byte[] longer = Arrays.copyOf(c, c.length + 1);
        assertThat(decodes(longer, words)).isFalse();
        // a zstd coding of the wrong size
        byte[] z = BloomBitsCoder.encode(full(words));
        assertThat(decodes(z, words)).isTrue();
        assertThat(decodes(z, words * 2)).isFalse();
        assertThat(decodes(z, words / 2)).isFalse();
        assertThat(BloomBitsCoder.decode(z, 0, z.length - 1, new long[words])).isFalse();
    }

    private static long[] full(int words) {
        long[] f = new long[words];
        Arrays.fill(f, -1L);
        return f;
    }

    @Test
    void decode_randomFlips_neverThrowAndKeepTheCount() {
        int words = 1 << 10;
        long[] f = blocked(words, 100, 11, 4);
        byte[] c = BloomBitsCoder.encode(f);
        long set = ByteBuffer.wrap(c).getLong(2);
        Random rnd = new Random(5);
        int refused = 0;
        for (int i = 0; i < 500; i++) {
            byte[] d = c.clone();
            int flips = 1 + rnd.nextInt(3);
            for (int j = 0; j < flips; j++) {
                int bit = rnd.nextInt(d.length * 8);
                d[bit >>> 3] ^= (byte) (0x80 >>> (bit & 7));
            }
            long[] into = new long[words];
            if (BloomBitsCoder.decode(d, 0, d.length, into)) {
                // a flip the code cannot see (the file's CRC does) still yields exactly the declared count
                assertThat(Arrays.stream(into).map(Long::bitCount).sum()).isEqualTo(ByteBuffer.wrap(d).getLong(2));
            } else {
                refused++;
            }
        }
        assertThat(set).isPositive();
        assertThat(refused).as("flips that break the code").isGreaterThan(100);
    }

    /** An 8 MiB filter (2^26 bits, k = 12: the default sizing) after 45,429 inserts, as in MetadataFootprintTest: sizes and times. */
    @Test
    void encode_fullSizeSparseFilter_printsSizeAndTimeAgainstZstd() {
        int inserts = 45_429;
        long[] f = blocked(1 << 20, inserts, 12, 6);
        byte[] rice = null;
        byte[] zstd = null;
        long riceEnc = Long.MAX_VALUE;
        long riceDec = Long.MAX_VALUE;
        long zEnc = Long.MAX_VALUE;
        long zDec = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long t0 = System.nanoTime();
            rice = BloomBitsCoder.encode(f);
            long t1 = System.nanoTime();
            long[] back = new long[f.length];
            BloomBitsCoder.decode(rice, 0, rice.length, back);
            long t2 = System.nanoTime();
            ByteBuffer raw = ByteBuffer.allocate(f.length * 8);
            raw.asLongBuffer().put(f);
            zstd = Zstd.compress(raw.array(), 1);
            long t3 = System.nanoTime();
            long[] zback = new long[f.length];
            ByteBuffer.wrap(Zstd.decompress(zstd, f.length * 8)).asLongBuffer().get(zback);
            long t4 = System.nanoTime();
            riceEnc = Math.min(riceEnc, t1 - t0);
            riceDec = Math.min(riceDec, t2 - t1);
            zEnc = Math.min(zEnc, t3 - t2);
            zDec = Math.min(zDec, t4 - t3);
            assertThat(back).isEqualTo(f);
            assertThat(zback).isEqualTo(f);
        }
        System.out.printf("BloomBitsCoderTest: 8 MiB filter, %,d inserts, %,d bits set: Rice (r = %d) %,d bytes"
                + " (%.1f per insert), encode %.1f ms, decode %.1f ms; zstd -1 %,d bytes (%.1f per insert),"
                + " encode %.1f ms, decode %.1f ms (best of 5)%n", inserts, ByteBuffer.wrap(rice).getLong(2), rice[1],
                rice.length, (double) rice.length / inserts, riceEnc / 1e6, riceDec / 1e6, zstd.length,
                (double) zstd.length / inserts, zEnc / 1e6, zDec / 1e6);
        assertThat(rice[0]).isEqualTo((byte) BloomBitsCoder.CODING_RICE);
        assertThat(rice.length).isLessThan(zstd.length);
    }
}
