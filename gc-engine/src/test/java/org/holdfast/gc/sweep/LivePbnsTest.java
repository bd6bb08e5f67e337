package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The PBN bitmap's union: what a reclaim-now watch takes from the open sessions. */
class LivePbnsTest {

    @Test
    void addAll_unionAcrossPagesAndOverlaps_countsEachPbnOnce() {
        long farPage = 5L << 22; // the sixth page of 4 Mi PBNs
        LivePbns a = new LivePbns();
        a.add(1);
        a.add(64);
        a.add(farPage);
        LivePbns b = new LivePbns();
        b.add(64);
        b.add(65);
        b.add(farPage + 1);
        b.add(9L << 22); // a page a does not have yet
        a.addAll(b);
        assertThat(a.count()).isEqualTo(6);
        for (long p : new long[] {1, 64, 65, farPage, farPage + 1, 9L << 22}) {
            assertThat(a.contains(p)).as("PBN " + p).isTrue();
        }
        assertThat(a.contains(2)).isFalse();
        b.add((9L << 22) + 1);
        assertThat(a.contains((9L << 22) + 1)).as("the union copied b's page, it does not share it").isFalse();
        assertThat(b.count()).isEqualTo(5);
    }
}
