package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.container.Container;
import org.junit.jupiter.api.Test;

/** The SFI snapshot: the v2 format holds only what is used, and a v1 file (fixture) still loads. */
class SfiSnapshotTest {
    /** Budget of the fixture's SFI (the v1 file is a dump of arrays of this size). */
    static final long FIXTURE_BUDGET = 8192;

    /** Containers of the fixture: ids 5, 9 and 12, one random segment each. */
    static Container[] fixtureContainers() {
        return new Container[] {SampledFingerprintIndexTest.segment(5, 51, 300), SampledFingerprintIndexTest.segment(9, 91, 200),
                SampledFingerprintIndexTest.segment(12, 121, 120)};
    }

    /** The SFI state the v1 fixture was written from: three segments, the second stabilized. */
    static SampledFingerprintIndex fixtureState() {
        SampledFingerprintIndex sfi = new SampledFingerprintIndex(FIXTURE_BUDGET);
        Container[] cs = fixtureContainers();
        int[] recs = new int[cs.length];
        for (int i = 0; i < cs.length; i++) {
            recs[i] = sfi.addSegment(cs[i], 0, 0, cs[i].count(), SampledFingerprintIndex.initialLevel(4), false);
        }
        sfi.stabilize(recs[1], 0);
        sfi.touch(recs[0]);
        return sfi;
    }

    /** Every key of the fixture's containers with the containers a probe answers for it, and the LRU order. */
    private static List<String> probes(SampledFingerprintIndex sfi) {
        List<String> out = new ArrayList<>();
        int[] found = new int[8];
        for (Container c : fixtureContainers()) {
            for (int o = 0; o < c.count(); o++) {
                int n = sfi.probe(c.key(o), found, 0);
                StringBuilder sb = new StringBuilder(Long.toHexString(c.key(o))).append(n >= SampledFingerprintIndex.HIT ? " hit" : " miss");
                for (int i = 0; i < (n & 0xffff); i++) {
                    sb.append(' ').append(found[i]);
                }
                out.add(sb.toString());
            }
        }
        return out;
    }

    /** Records from LRU head to tail as level/samples. */
    private static List<String> records(SampledFingerprintIndex sfi) {
        List<String> out = new ArrayList<>();
        for (int r : sfi.lruOrder()) {
            out.add(sfi.levelOf(r) + "/" + sfi.samples(r));
        }
        return out;
    }

    private static byte[] write(SampledFingerprintIndex sfi) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            sfi.writeTo(out);
        }
        return bytes.toByteArray();
    }

    @Test
    void version1Fixture_loads_andAnswersAsTheStateItWasWrittenFrom() throws IOException {
        SampledFingerprintIndex expected = fixtureState();
        SampledFingerprintIndex loaded = new SampledFingerprintIndex(FIXTURE_BUDGET);
        try (InputStream in = SfiSnapshotTest.class.getResourceAsStream("sfi-v1.snapshot")) {
            assertThat(in).as("fixture sfi-v1.snapshot").isNotNull();
            byte[] file = in.readAllBytes();
            assertThat(file).hasSize(8223); // v1 dumps every array at the full S_SFI size, used or not
            assertThat(loaded.readFrom(new DataInputStream(new ByteArrayInputStream(file)))).isTrue();
        }
        assertThat(loaded.entries()).isEqualTo(expected.entries()).isEqualTo(107);
        assertThat(loaded.records()).isEqualTo(3);
        assertThat(records(loaded)).isEqualTo(records(expected));
        assertThat(probes(loaded)).isEqualTo(probes(expected));
    }

    @Test
    void version2_roundTrip_sameAnswers_andSizeFollowsTheSamplesNotTheBudget() throws IOException {
        SampledFingerprintIndex expected = fixtureState();
        byte[] v2 = write(expected);
        // 24-byte header, then per record 11 bytes plus 8 per sample
        assertThat(v2).hasSize(24 + 3 * 11 + 8 * expected.entries());
        assertThat(v2.length).isLessThan(8223 / 8);
        SampledFingerprintIndex loaded = new SampledFingerprintIndex(FIXTURE_BUDGET);
        assertThat(loaded.readFrom(new DataInputStream(new ByteArrayInputStream(v2)))).isTrue();
        assertThat(loaded.entries()).isEqualTo(expected.entries());
        assertThat(records(loaded)).isEqualTo(records(expected));
        assertThat(probes(loaded)).isEqualTo(probes(expected));
        // the loaded index goes on working: a new segment is added and found
        Container more = SampledFingerprintIndexTest.segment(20, 201, 100);
        int r = loaded.addSegment(more, 0, 0, more.count(), SampledFingerprintIndex.initialLevel(4), false);
        assertThat(r).isNotNegative();
        assertThat(loaded.findRecord(more.key(more.anchorOffset(0)), 20, 0)).isEqualTo(r);
    }

    @Test
    void version2_ofAnotherBudget_isRefused() throws IOException {
        byte[] v2 = write(fixtureState());
        SampledFingerprintIndex other = new SampledFingerprintIndex(2 * FIXTURE_BUDGET);
        assertThat(other.readFrom(new DataInputStream(new ByteArrayInputStream(v2)))).isFalse();
    }

    @Test
    void fullBudgetSfi_nearlyEmpty_writesKilobytesNotTheBudget() throws IOException {
        SampledFingerprintIndex sfi = new SampledFingerprintIndex(64L << 20); // the default S_SFI
        Container c = SampledFingerprintIndexTest.segment(1, 7, 1000);
        sfi.addSegment(c, 0, 0, c.count(), SampledFingerprintIndex.initialLevel(16), false);
        assertThat(write(sfi).length).isLessThan(4096);
    }
}
