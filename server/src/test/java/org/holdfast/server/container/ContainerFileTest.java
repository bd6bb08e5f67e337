package org.holdfast.server.container;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.Zstd;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * Container file format 2 (compact columns) and the version 1 files it still reads (issue 14,
 * "Metadata that stays small"): round trips, the v1 fixture, corrupt and forged files, and the
 * size and load time of a full container in both versions.
 */
class ContainerFileTest {
    /** The checked-in version 1 file, written by {@link #v1FixtureContainer()} at release 1. */
    private static final String V1_FIXTURE = "/fixtures/container-v1/0000002a.hfc";
    private static final int U_CONTAINER = 16384;

    private static byte[] fps(long seed, int n) {
        byte[] b = new byte[n * 32];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static long[] pbns(long first, long step, int n) {
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = first + step * i;
        }
        return p;
    }

    /**
     * The container the v1 fixture was written from (see its README.txt): consecutive, strided,
     * descending and 2^40-sized PBNs, split and merged segments, a stable one, two free segment
     * slots and three purged entries.
     */
    static Container v1FixtureContainer() {
        Container c = new Container(0x2a, 1024, 2);
        c.appendSegment(fps(1, 40), 0, 40, pbns(1000, 1, 40), 1);
        c.appendSegment(fps(2, 30), 0, 30, pbns(5000, 3, 30), 2);
        c.appendSegment(fps(3, 20), 0, 20, pbns((1L << 40) + 20, -1, 20), 3);
        int sub = c.addSubSegment(10, 25, 4);
        c.setStable(sub);
        c.countExactMatch(sub, 5);
        c.countExactMatch(sub, 6);
        c.addSubSegment(15, 20, 7);
        c.addSubSegment(40, 70, 8);
        c.addSubSegment(40, 70, 9);
        c.mergeTiling(0, 40, 100, 10);
        c.purge(p -> p == 1005 || p == 5009 || p == (1L << 40) + 3, 11);
        return c;
    }

    /**
     * A full container shaped like the engine's: segments of 64 to 1,024 fingerprints with densely
     * allocated PBNs, then partial matches (sub-segments, K=2), exact matches and a few purges.
     */
    static Container fullContainer(long seed) {
        Random r = new Random(seed);
        Container c = new Container(7, U_CONTAINER, 2);
        long pbn = 1 + r.nextInt(1 << 20);
        long stamp = 1;
        while (c.count() < U_CONTAINER) {
            int len = Math.min(U_CONTAINER - c.count(), 64 + r.nextInt(961));
            c.appendSegment(fps(r.nextLong(), len), 0, len, pbns(pbn, 1, len), stamp++);
            pbn += len + (r.nextInt(4) == 0 ? r.nextInt(5000) : 0);
        }
        for (int i = 0; i < 300; i++) {
            int start = r.nextInt(U_CONTAINER - 64);
            int sub = c.addSubSegment(start, start + 8 + r.nextInt(56), stamp++);
            if (r.nextBoolean()) {
                c.countExactMatch(sub, stamp++);
            }
            if (r.nextInt(3) == 0) {
                c.setStable(sub);
            }
        }
        c.purge(p -> p % 97 == 0, 42);
        return c;
    }

    /** Asserts that {@code actual} holds exactly {@code expected}'s state, the FI included. */
    static void assertSameContainer(Container actual, Container expected) {
        assertThat(actual).isNotNull();
        assertThat(actual.id()).isEqualTo(expected.id());
        assertThat(actual.k()).isEqualTo(expected.k());
        assertThat(actual.count()).isEqualTo(expected.count());
        assertThat(actual.live()).isEqualTo(expected.live());
        assertThat(actual.purgedSeq()).isEqualTo(expected.purgedSeq());
        assertThat(actual.maxFingerprints()).isEqualTo(expected.maxFingerprints());
        assertThat(actual.segments()).isEqualTo(expected.segments());
        assertThat(actual.segmentSlots()).isEqualTo(expected.segmentSlots());
        for (int off = 0; off < expected.count(); off++) {
            for (int w = 0; w < 4; w++) {
                assertThat(actual.word(off, w)).as("offset %d word %d", off, w).isEqualTo(expected.word(off, w));
            }
            assertThat(actual.pbn(off)).as("PBN of offset %d", off).isEqualTo(expected.pbn(off));
            assertThat(actual.find(actual.word(off, 0), actual.word(off, 1), actual.word(off, 2), actual.word(off, 3)))
                    .as("FI for offset %d", off)
                    .isEqualTo(expected.find(expected.word(off, 0), expected.word(off, 1), expected.word(off, 2),
                            expected.word(off, 3)));
            for (int j = 0; j < expected.k(); j++) {
                assertThat(actual.segmentAt(off, j)).as("SI of offset %d slot %d", off, j)
                        .isEqualTo(expected.segmentAt(off, j));
            }
        }
        for (int s = 0; s < expected.segmentSlots(); s++) {
            assertThat(actual.isLiveSegment(s)).as("segment %d live", s).isEqualTo(expected.isLiveSegment(s));
            if (expected.isLiveSegment(s)) {
                assertThat(actual.segmentStart(s)).as("segment %d start", s).isEqualTo(expected.segmentStart(s));
                assertThat(actual.segmentEnd(s)).as("segment %d end", s).isEqualTo(expected.segmentEnd(s));
                assertThat(actual.exactMatches(s)).as("segment %d exact", s).isEqualTo(expected.exactMatches(s));
                assertThat(actual.isStable(s)).as("segment %d stable", s).isEqualTo(expected.isStable(s));
                assertThat(actual.lastUse(s)).as("segment %d stamp", s).isEqualTo(expected.lastUse(s));
            }
        }
    }

    /** The version 1 encoder of the first release, kept here to compare sizes and load times. */
    static byte[] encodeV1(Container c) {
        int n = c.count();
        int k = c.k();
        int s = c.segmentCapacity();
        int len = ContainerFile.HEADER_BYTES + n * 40 + s * 24 + n * k * 4 + 4;
        ByteBuffer b = ByteBuffer.allocate(len);
        b.putInt(ContainerFile.MAGIC).putShort((short) 1).putShort((short) ContainerFile.HEADER_BYTES).putInt(c.id())
                .putInt(n).putInt(s).put((byte) k).put((byte) 0).putShort((short) 0).putLong(c.purgedSeq())
                .putInt(c.maxFingerprints());
        b.position(ContainerFile.HEADER_BYTES);
        for (int i = 0; i < n * 4; i++) {
            b.putLong(c.wordsArray()[i]);
        }
        for (int off = 0; off < n; off++) {
            b.putLong(c.pbn(off));
        }
        for (int i = 0; i < s; i++) {
            if (c.isLiveSegment(i)) {
                b.putInt(c.segmentStart(i)).putInt(c.segmentEnd(i)).putInt(c.exactMatches(i)).putInt(c.segmentFlags(i))
                        .putLong(c.lastUse(i));
            } else {
                b.putInt(0).putInt(0).putInt(0).putInt(Container.FLAG_DEAD).putLong(0);
            }
        }
        for (int i = 0; i < n * k; i++) {
            b.putInt(c.siAt(i));
        }
        return withCrc(b.array());
    }

    /** Rewrites the trailing CRC32C so a forged file passes the checksum. */
    private static byte[] withCrc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length - 4);
        ByteBuffer.wrap(data).putInt(data.length - 4, (int) crc.getValue());
        return data;
    }

    private static byte[] v1Fixture() throws IOException {
        try (InputStream in = ContainerFileTest.class.getResourceAsStream(V1_FIXTURE)) {
            assertThat(in).as("fixture %s", V1_FIXTURE).isNotNull();
            return in.readAllBytes();
        }
    }

    private static int frameAt(byte[] v2) {
        return ContainerFile.HEADER_BYTES + ByteBuffer.wrap(v2).getInt(12) * 32;
    }

    @Test
    void decode_v1Fixture_loadsIdenticallyToTheContainerThatWroteIt() throws IOException {
        byte[] fixture = v1Fixture();
        assertThat(ByteBuffer.wrap(fixture).getShort(4)).as("fixture version").isEqualTo((short) 1);
        Container expected = v1FixtureContainer();
        assertThat(encodeV1(expected)).as("the fixture is what release 1 wrote for this container").isEqualTo(fixture);
        Container loaded = ContainerFile.decode(fixture, 0x2a, 1024);
        assertSameContainer(loaded, expected);
        assertSameContainer(ContainerFile.decode(ContainerFile.encode(loaded), 0x2a, 1024), expected);
    }

    @Test
    void encode_writesVersion2_headerLengthsAndRawFingerprints() {
        Container c = v1FixtureContainer();
        byte[] v2 = ContainerFile.encode(c);
        ByteBuffer b = ByteBuffer.wrap(v2);
        assertThat(b.getInt(0)).isEqualTo(ContainerFile.MAGIC);
        assertThat(b.getShort(4)).isEqualTo((short) 2);
        assertThat(b.getShort(6)).isEqualTo((short) 64);
        assertThat(b.getInt(8)).isEqualTo(0x2a);
        assertThat(b.getInt(12)).isEqualTo(90);
        assertThat(b.getInt(16)).isEqualTo(c.segmentSlots());
        assertThat(b.get(20)).isEqualTo((byte) 2);
        assertThat(b.getLong(24)).isEqualTo(11);
        assertThat(b.getInt(32)).isEqualTo(1024);
        int m = b.getInt(36);
        int packed = b.getInt(40);
        assertThat(v2).hasSize(64 + 90 * 32 + packed + 4);
        byte[] reserved = Arrays.copyOfRange(v2, 44, 64);
        assertThat(reserved).containsOnly(0);
        byte[] fingerprints = new byte[90 * 32];
        System.arraycopy(fps(1, 40), 0, fingerprints, 0, 40 * 32);
        System.arraycopy(fps(2, 30), 0, fingerprints, 40 * 32, 30 * 32);
        System.arraycopy(fps(3, 20), 0, fingerprints, 70 * 32, 20 * 32);
        assertThat(Arrays.copyOfRange(v2, 64, 64 + 90 * 32)).as("fingerprints raw, in offset order")
                .isEqualTo(fingerprints);
        assertThat(Zstd.getFrameContentSize(v2, 64 + 90 * 32, packed)).as("the frame declares m").isEqualTo(m);
        byte[] columns = Zstd.decompress(Arrays.copyOfRange(v2, 64 + 90 * 32, 64 + 90 * 32 + packed), m);
        // PBN runs: 5 from 1000 (1 + zigzag(1000 - 1) = 1999, varint CF 0F), 1 purged, 34 from 1006 (1 + zigzag(1))
        assertThat(Arrays.copyOf(columns, 7)).containsExactly(5, 0xCF, 0x0F, 1, 0, 34, 3);
    }

    @Test
    void encodeDecode_version2_roundTripsEveryField() {
        Container fixture = v1FixtureContainer();
        assertSameContainer(ContainerFile.decode(ContainerFile.encode(fixture), 0x2a, 1024), fixture);
        for (long seed = 1; seed <= 3; seed++) {
            Container c = fullContainer(seed);
            assertSameContainer(ContainerFile.decode(ContainerFile.encode(c), 7, U_CONTAINER), c);
        }
        Container empty = new Container(5, 64, 3);
        assertSameContainer(ContainerFile.decode(ContainerFile.encode(empty), 5, 64), empty);
    }

    @Test
    void encode_fullContainer_spendsUnder34BytesPerFingerprint() {
        Container c = fullContainer(11);
        int v1 = encodeV1(c).length;
        int v2 = ContainerFile.encode(c).length;
        assertThat(v1 / (double) U_CONTAINER).as("version 1 bytes per fingerprint").isGreaterThan(48);
        assertThat(v2 / (double) U_CONTAINER).as("version 2 bytes per fingerprint").isLessThan(34);
    }

    @Test
    void decode_randomFlipsAndTruncations_areAbsentOrTheExactOriginal() throws IOException {
        byte[][] files = {ContainerFile.encode(v1FixtureContainer()), v1Fixture()};
        Container expected = v1FixtureContainer();
        Random r = new Random(14);
        for (byte[] good : files) {
            for (int i = 0; i < 300; i++) {
                byte[] bad = good.clone();
                switch (i % 3) {
                    case 0 -> bad[r.nextInt(bad.length)] ^= (byte) (1 << r.nextInt(8));
                    case 1 -> {
                        for (int j = 0; j < 1 + r.nextInt(4); j++) {
                            bad[r.nextInt(bad.length)] = (byte) r.nextInt(256);
                        }
                    }
                    default -> bad = Arrays.copyOf(good, r.nextInt(good.length + 16));
                }
                Container d = ContainerFile.decode(bad, 0x2a, 1024);
                if (d != null) {
                    assertSameContainer(d, expected);
                }
            }
        }
    }

    @Test
    void decode_forgedColumnsWithAValidChecksum_areAbsentOrValidNeverAnException() {
        Container original = v1FixtureContainer();
        byte[] good = ContainerFile.encode(original);
        int at = frameAt(good);
        Random r = new Random(1414);
        int absent = 0;
        for (int i = 0; i < 400; i++) {
            byte[] bad = good.clone();
            // the header's counts and lengths, and the compressed frame: what the CRC no longer guards
            int pos = i % 2 == 0 ? 12 + r.nextInt(32) : at + r.nextInt(bad.length - 4 - at);
            bad[pos] ^= (byte) (1 << r.nextInt(8));
            Container d = ContainerFile.decode(withCrc(bad), 0x2a, 1024);
            if (d == null) {
                absent++;
            } else {
                // whatever decoded is a container the engine can use: it encodes and decodes again
                assertSameContainer(ContainerFile.decode(ContainerFile.encode(d), 0x2a, 1024), d);
            }
        }
        // Past the CRC nothing can tell a forged purged sequence, U_container or zstd literal from a real
        // one; counts, lengths and the varints it breaks are caught (240 of the 400 with this seed).
        assertThat(absent).as("forged files read as absent").isGreaterThan(200);
    }

    @Test
    void decode_lengthsThatLie_areAbsent() {
        byte[] good = ContainerFile.encode(v1FixtureContainer());
        int at = frameAt(good);
        ByteBuffer g = ByteBuffer.wrap(good);
        int m = g.getInt(36);
        int packed = g.getInt(40);
        for (int lie : new int[] {m - 1, m + 1, 0, -1, Integer.MAX_VALUE}) {
            byte[] bad = good.clone();
            ByteBuffer.wrap(bad).putInt(36, lie);
            assertThat(ContainerFile.decode(withCrc(bad), 0x2a, 1024)).as("m = %d", lie).isNull();
        }
        for (int lie : new int[] {packed - 1, packed + 1, 0, -1}) {
            byte[] bad = good.clone();
            ByteBuffer.wrap(bad).putInt(40, lie);
            assertThat(ContainerFile.decode(withCrc(bad), 0x2a, 1024)).as("c = %d", lie).isNull();
        }
        byte[] truncatedFrame = Arrays.copyOf(good, good.length - 5);
        ByteBuffer.wrap(truncatedFrame).putInt(40, packed - 1);
        assertThat(ContainerFile.decode(withCrc(truncatedFrame), 0x2a, 1024)).as("truncated frame").isNull();
        byte[] columns = Zstd.decompress(Arrays.copyOfRange(good, at, at + packed), m);
        byte[] longer = Zstd.compress(Arrays.copyOf(columns, m + 1), 3);
        assertThat(ContainerFile.decode(withFrame(good, longer, m), 0x2a, 1024)).as("frame of m + 1 bytes").isNull();
        byte[] shorter = Zstd.compress(Arrays.copyOf(columns, m - 1), 3);
        assertThat(ContainerFile.decode(withFrame(good, shorter, m), 0x2a, 1024)).as("frame of m - 1 bytes").isNull();
        byte[] raw = new byte[m];
        Arrays.fill(raw, (byte) 0xFF);
        assertThat(ContainerFile.decode(withFrame(good, Zstd.compress(raw, 3), m), 0x2a, 1024))
                .as("varints that never end").isNull();
        assertThat(ContainerFile.decode(withFrame(good, columns, m), 0x2a, 1024)).as("columns not compressed").isNull();
    }

    /**
     * Version 2 no longer ties the declared shape to the file's size: a header may declare K = 16 and
     * s = n K + 1 segment slots and a frame of a few hundred bytes may declare the m bytes that shape
     * allows. Version 1 needed a file as large as that (24 bytes per slot); decoding a version 2
     * file must not allocate many times its own size on the word of its header.
     */
    @Test
    void decode_headerDeclaringAHugeShapeBehindATinyFrame_allocatesLittleMoreThanTheFile() {
        int n = U_CONTAINER;
        int storeK = 2;
        // K = 16 is refused by a store of K = 2 before anything is allocated from the header
        byte[] k16 = forgedShape(n, Container.MAX_K);
        long allocated16 = allocatedBy(() -> assertThat(ContainerFile.decode(k16, 7, U_CONTAINER, storeK)).as("K above the store's").isNull());
        assertThat(allocated16).as("bytes allocated refusing a %,d-byte file", k16.length).isLessThan(k16.length / 2L);
        // the largest shape the store's K allows: n K + 1 slots behind a frame of zeros
        byte[] k2 = forgedShape(n, storeK);
        long allocated2 = allocatedBy(() -> assertThat(ContainerFile.decode(k2, 7, U_CONTAINER, storeK)).as("columns of zeros").isNull());
        // a real full container allocates about 3.5 times its file size (arrays, FI, columns)
        assertThat(allocated2).as("bytes allocated decoding a %,d-byte file", k2.length).isLessThan(8L * k2.length);
    }

    /** A version 2 file of {@code n} fingerprints declaring K = {@code k} and n K + 1 segment slots, its columns a zstd frame of zeros. */
    private static byte[] forgedShape(int n, int k) {
        int s = n * k + 1;
        int m = (int) ContainerColumns.maxBytes(n, s, k);
        byte[] frame = Zstd.compress(new byte[m], 3);
        byte[] forged = new byte[64 + n * 32 + frame.length + 4];
        ByteBuffer.wrap(forged).putInt(ContainerFile.MAGIC).putShort((short) 2).putShort((short) 64).putInt(7).putInt(n)
                .putInt(s).put((byte) k).put((byte) 0).putShort((short) 0).putLong(1).putInt(n).putInt(m).putInt(frame.length);
        System.arraycopy(fps(9, n), 0, forged, 64, n * 32);
        System.arraycopy(frame, 0, forged, 64 + n * 32, frame.length);
        return withCrc(forged);
    }

    private static long allocatedBy(Runnable r) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory
                .getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        r.run();
        return threads.getCurrentThreadAllocatedBytes() - before;
    }

    /** {@code good} with its frame replaced by {@code frame}, the header's m set to {@code m}, CRC fixed. */
    private static byte[] withFrame(byte[] good, byte[] frame, int m) {
        int at = frameAt(good);
        byte[] out = Arrays.copyOf(good, at + frame.length + 4);
        System.arraycopy(frame, 0, out, at, frame.length);
        ByteBuffer.wrap(out).putInt(36, m).putInt(40, frame.length);
        return withCrc(out);
    }

    /** Prints sizes of the column encodings weighed for version 2 and the load time of v1 against v2. */
    @Test
    void decode_fullContainer_printsSizesAndLoadTimesOfBothVersions() {
        Container c = fullContainer(3);
        byte[] v1 = encodeV1(c);
        byte[] v2 = ContainerFile.encode(c);
        int n = c.count();
        byte[] raw = Arrays.copyOfRange(v1, 64 + n * 32, v1.length - 4);
        byte[] runs = new byte[(int) ContainerColumns.maxBytes(n, c.segmentCapacity(), c.k())];
        int m = ContainerColumns.encode(c, runs);
        byte[] cols = Arrays.copyOf(runs, m);
        System.out.printf("ContainerFileTest: full container, %d fingerprints, K=2, %d segment slots%n", n,
                c.segmentCapacity());
        System.out.printf("| columns beside the fingerprints | bytes | per fingerprint |%n| --- | ---: | ---: |%n");
        printRow("version 1, raw", raw.length, n);
        printRow("raw, zstd level 3", Zstd.compress(raw, 3).length, n);
        printRow("varint runs", m, n);
        printRow("varint runs, zstd level 1", Zstd.compress(cols, 1).length, n);
        printRow("varint runs, zstd level 3 (version 2)", Zstd.compress(cols, 3).length, n);
        printRow("whole file, version 1", v1.length, n);
        printRow("whole file, version 2", v2.length, n);
        long[] best = {Long.MAX_VALUE, Long.MAX_VALUE};
        int rounds = 100;
        for (int round = 0; round < 5; round++) {
            for (int v = 0; v < 2; v++) {
                byte[] file = v == 0 ? v1 : v2;
                long t0 = System.nanoTime();
                for (int i = 0; i < rounds; i++) {
                    assertThat(ContainerFile.decode(file, 7, U_CONTAINER).count()).isEqualTo(n);
                }
                best[v] = Math.min(best[v], (System.nanoTime() - t0) / rounds);
            }
        }
        System.out.printf("ContainerFileTest: load (decode) of a full container, best of 5 x %d: version 1 %d us,"
                + " version 2 %d us%n", rounds, best[0] / 1000, best[1] / 1000);
        assertSameContainer(ContainerFile.decode(v1, 7, U_CONTAINER), c);
    }

    private static void printRow(String what, int bytes, int n) {
        System.out.printf("| %s | %,d | %.2f |%n", what, bytes, bytes / (double) n);
    }
}
