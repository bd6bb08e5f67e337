package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.holdfast.server.container.Container;
import org.junit.jupiter.api.Test;

class SampledFingerprintIndexTest {

    /** A container with one segment of {@code n} random fingerprints. */
    static Container segment(int id, long seed, int n) {
        Container c = new Container(id, 1 << 14, 2);
        byte[] f = new byte[n * 32];
        new Random(seed).nextBytes(f);
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = 1 + i;
        }
        c.appendSegment(f, 0, n, p, 1);
        return c;
    }

    @Test
    void addSegment_initialLevel_keepsAboutOneInSInitAndProbeFindsContainer() {
        SampledFingerprintIndex sfi = new SampledFingerprintIndex(1 << 20);
        Container c = segment(7, 1, 4096);
        int r = sfi.addSegment(c, 0, 0, 4096, SampledFingerprintIndex.initialLevel(16), false);
        assertThat(sfi.samples(r)).isBetween(4096 / 16 / 2, 4096 / 16 * 2);
        int[] out = new int[4];
        int hits = 0;
        for (int o = 0; o < 4096; o++) {
            int n = sfi.probe(c.key(o), out, 0);
            if (n >= SampledFingerprintIndex.HIT) {
                hits++;
                assertThat(out[0]).isEqualTo(7);
            }
        }
        assertThat(hits).isEqualTo(sfi.samples(r));
    }

    @Test
    void stabilize_segment_keepsOnlyItsAnchor() {
        SampledFingerprintIndex sfi = new SampledFingerprintIndex(1 << 20);
        Container c = segment(3, 2, 1024);
        int r = sfi.addSegment(c, 0, 0, 1024, 4, false);
        sfi.stabilize(r, 0);
        assertThat(sfi.samples(r)).isEqualTo(1);
        assertThat(sfi.findRecord(c.key(c.anchorOffset(0)), 3, 0)).isEqualTo(r);
        assertThat(sfi.entries()).isEqualTo(1);
    }

    @Test
    void addSegment_whenFull_downsamplesTailBeforeEvictingAndKeepsHead() {
        SampledFingerprintIndex sfi = new SampledFingerprintIndex(16 * 1024);
        int cap = sfi.capacity();
        int[] recs = new int[64];
        int n = 0;
        // Fill with segments of ~16 samples each until the SFI is nearly full.
        while (sfi.entries() + 64 < cap) {
            Container c = segment(100 + n, 10 + n, 256);
            recs[n] = sfi.addSegment(c, 0, 0, 256, 4, false);
            n++;
        }
        int headBefore = sfi.samples(recs[n - 1]);
        int tailBefore = sfi.samples(recs[0]);
        sfi.touch(recs[n - 1]);
        assertThat(sfi.evictions()).isZero();
        // More segments force replacement.
        for (int i = 0; i < 8; i++) {
            Container more = segment(900 + i, 90 + i, 256);
            sfi.addSegment(more, 0, 0, 256, 4, false);
        }
        assertThat(sfi.downsamples()).isPositive();
        assertThat(sfi.evictions()).as("down-sampling comes before any eviction").isLessThan(sfi.downsamples());
        assertThat(sfi.samples(recs[0])).as("tail down-sampled").isLessThan(tailBefore);
        assertThat(sfi.samples(recs[n - 1])).as("recently used record untouched").isEqualTo(headBefore);
        assertThat(sfi.entries()).isLessThanOrEqualTo(cap);
    }

    @Test
    void replacement_recordsAtOneSample_areEvictedInLruOrder() {
        SampledFingerprintIndex sfi = new SampledFingerprintIndex(8 * 1024);
        int records = 0;
        int[] recs = new int[4096];
        long[] keys = new long[4096];
        while (sfi.entries() < sfi.capacity() && records < 4096) {
            Container c = segment(1 + records, 1000 + records, 64);
            int r = sfi.addSegment(c, 0, 0, 64, 4, true);
            if (r < 0) {
                continue;
            }
            keys[records] = c.key(c.anchorOffset(0));
            recs[records++] = r;
        }
        long evictedBefore = sfi.evictions();
        Container extra = segment(50_000, 77, 64);
        sfi.addSegment(extra, 0, 0, 64, 4, true);
        assertThat(sfi.evictions()).isEqualTo(evictedBefore + 1);
        // The oldest record's sample is gone, the newest's remains.
        int[] out = new int[4];
        assertThat(sfi.probe(keys[0], out, 0)).isLessThan(SampledFingerprintIndex.HIT);
        assertThat(sfi.probe(keys[records - 1], out, 0)).isGreaterThanOrEqualTo(SampledFingerprintIndex.HIT);
    }

    @Test
    void memoryBytes_neverExceedsBudget() {
        for (long budget : new long[] {4096, 100_000, 1 << 20, 12_345_678}) {
            assertThat(new SampledFingerprintIndex(budget).memoryBytes()).isLessThanOrEqualTo(budget);
        }
    }
}
