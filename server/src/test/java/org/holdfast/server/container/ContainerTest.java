package org.holdfast.server.container;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class ContainerTest {

    private static byte[] fps(long seed, int n) {
        byte[] b = new byte[n * 32];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static long[] pbns(long first, int n) {
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = first + i;
        }
        return p;
    }

    private static int segmentsAt(Container c, int off) {
        int n = 0;
        for (int j = 0; j < c.k(); j++) {
            if (c.segmentAt(off, j) >= 0) {
                n++;
            }
        }
        return n;
    }

    @Test
    void find_andExtend_matchExactFingerprintsOnly() {
        Container c = new Container(1, 1024, 2);
        byte[] f = fps(1, 100);
        c.appendSegment(f, 0, 100, pbns(10, 100), 1);
        assertThat(c.find(f, 40)).isEqualTo(40);
        assertThat(c.extend(f, 40, 100, 40)).isEqualTo(60);
        byte[] g = f.clone();
        g[50 * 32 + 31] ^= 1;
        assertThat(c.find(g, 50)).isEqualTo(-1);
        assertThat(c.extend(g, 40, 100, 40)).isEqualTo(10);
    }

    @Test
    void addSubSegment_inMiddleWithKOne_splitsTheOlderSegmentInTwo() {
        Container c = new Container(1, 1024, 1);
        byte[] f = fps(2, 100);
        int s = c.appendSegment(f, 0, 100, pbns(1, 100), 1);
        int sub = c.addSubSegment(30, 60, 2);
        assertThat(c.segmentStart(sub)).isEqualTo(30);
        assertThat(c.segmentEnd(sub)).isEqualTo(60);
        assertThat(c.segmentStart(s)).isEqualTo(0);
        assertThat(c.segmentEnd(s)).isEqualTo(30);
        assertThat(c.segments()).isEqualTo(3);
        int right = c.segmentAt(60, 0);
        assertThat(c.segmentStart(right)).isEqualTo(60);
        assertThat(c.segmentEnd(right)).isEqualTo(100);
        for (int off = 0; off < 100; off++) {
            assertThat(segmentsAt(c, off)).isEqualTo(1);
        }
    }

    @Test
    void addSubSegment_repeatedOverlaps_neverPutsAFingerprintInMoreThanKSegments() {
        Container c = new Container(1, 4096, 2);
        c.appendSegment(fps(3, 1000), 0, 1000, pbns(1, 1000), 1);
        Random r = new Random(4);
        for (int i = 0; i < 200; i++) {
            int a = r.nextInt(990);
            int b = a + 1 + r.nextInt(Math.min(200, 1000 - a - 1) + 1);
            if (c.exactSegment(a, b) < 0) {
                c.addSubSegment(a, Math.min(b, 1000), 10 + i);
            }
        }
        for (int off = 0; off < 1000; off++) {
            assertThat(segmentsAt(c, off)).isBetween(0, 2);
            for (int j = 0; j < 2; j++) {
                int s = c.segmentAt(off, j);
                if (s >= 0) {
                    assertThat(c.segmentStart(s)).isLessThanOrEqualTo(off);
                    assertThat(c.segmentEnd(s)).isGreaterThan(off);
                }
            }
        }
    }

    @Test
    void mergeTiling_adjacentSegmentsMatchedTogether_becomeOne() {
        Container c = new Container(1, 1024, 2);
        byte[] f = fps(5, 300);
        long[] p = pbns(1, 300); // indexed like the fingerprints
        int a = c.appendSegment(f, 0, 100, p, 1);
        c.appendSegment(f, 100, 100, p, 2);
        c.appendSegment(f, 200, 100, p, 3);
        assertThat(c.mergeTiling(0, 150, 1000, 4)).as("does not tile").isEqualTo(-1);
        int m = c.mergeTiling(0, 200, 1000, 5);
        assertThat(m).isEqualTo(a);
        assertThat(c.segmentEnd(m)).isEqualTo(200);
        assertThat(c.exactSegment(0, 200)).isEqualTo(m);
        assertThat(c.segments()).isEqualTo(2);
        assertThat(c.mergeTiling(0, 300, 250, 6)).as("longer than U_segment").isEqualTo(-1);
    }

    @Test
    void purge_stalePbns_areNeverFoundAgain() {
        Container c = new Container(1, 1024, 2);
        byte[] f = fps(6, 50);
        c.appendSegment(f, 0, 50, pbns(1, 50), 1);
        int removed = c.purge(p -> p % 10 == 0, 7);
        assertThat(removed).isEqualTo(5);
        assertThat(c.find(f, 9)).isEqualTo(-1);
        assertThat(c.find(f, 8)).isEqualTo(8);
        assertThat(c.extend(f, 0, 50, 0)).isEqualTo(9);
        assertThat(c.purgedSeq()).isEqualTo(7);
        assertThat(c.live()).isEqualTo(45);
    }

    @Test
    void encodeDecode_roundTrip_keepsSegmentsAndIds() {
        Container c = new Container(9, 1024, 2);
        byte[] f = fps(7, 200);
        c.appendSegment(f, 0, 200, pbns(1, 200), 1);
        int sub = c.addSubSegment(50, 120, 2);
        c.setStable(sub);
        Container d = ContainerFile.decode(ContainerFile.encode(c), 9, 1024);
        assertThat(d).isNotNull();
        assertThat(d.count()).isEqualTo(200);
        assertThat(d.exactSegment(50, 120)).isEqualTo(sub);
        assertThat(d.isStable(sub)).isTrue();
        assertThat(d.find(f, 199)).isEqualTo(199);
        assertThat(d.pbn(199)).isEqualTo(200);
    }

    @Test
    void decode_anyFlippedByteOrTruncation_isAbsentNotWrong() {
        Container c = new Container(2, 1024, 2);
        c.appendSegment(fps(8, 64), 0, 64, pbns(1, 64), 1);
        byte[] good = ContainerFile.encode(c);
        Random r = new Random(9);
        for (int i = 0; i < 200; i++) {
            byte[] bad = good.clone();
            bad[r.nextInt(bad.length)] ^= (byte) (1 + r.nextInt(255));
            assertThat(ContainerFile.decode(bad, 2, 1024)).isNull();
        }
        assertThat(ContainerFile.decode(java.util.Arrays.copyOf(good, good.length - 7), 2, 1024)).isNull();
        assertThat(ContainerFile.decode(good, 3, 1024)).as("wrong id").isNull();
    }
}
