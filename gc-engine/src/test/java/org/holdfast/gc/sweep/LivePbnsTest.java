package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The PBN bitmap: its union (what a reclaim-now watch takes from the open sessions) and its pages counted from the range. */
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

    @Test
    void add_rangeAt2To48_allocatesPagePointersForItsOwnBlocksOnly() {
        long first = 1L << 48;
        LivePbns s = new LivePbns(first);
        s.add(first);
        s.add(first + 63);
        s.add(first + (3L << 22)); // the fourth page of the range's 4 Mi PBNs
        assertThat(s.pageSlots()).as("page pointers from the range's first PBN, not 2^48 / 4 Mi = 67108864").isLessThanOrEqualTo(4);
        assertThat(s.count()).isEqualTo(3);
        assertThat(s.contains(first)).isTrue();
        assertThat(s.contains(first + 63)).isTrue();
        assertThat(s.contains(first + (3L << 22))).isTrue();
        assertThat(s.contains(first + 1)).isFalse();
        assertThat(s.contains(first - 1)).as("below the range").isFalse();
        assertThat(s.contains(0)).isFalse();
    }

    @Test
    void add_pbnBelowTheRange_isRefusedAndNothingMarked() {
        LivePbns s = new LivePbns(1L << 48);
        assertThatThrownBy(() -> s.add((1L << 48) - 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("another node's range");
        assertThat(s.count()).isZero();
        assertThat(s.pageSlots()).isZero();
        assertThat(s.add(0)).as("PBN 0, no block, stays ignored").isFalse();
    }

    @Test
    void addAll_setsOverDifferentRanges_refused() {
        LivePbns a = new LivePbns(1L << 48);
        LivePbns b = new LivePbns(1L << 40);
        b.add(1L << 40);
        assertThatThrownBy(() -> a.addAll(b)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("different ranges");
        assertThat(a.count()).isZero();
    }

    @Test
    void add_standalone_pageBoundariesCountFromPbn1() {
        LivePbns s = new LivePbns();
        s.add(1L << 22); // offset 4 Mi - 1: the last bit of page 0
        assertThat(s.pageSlots()).isEqualTo(1);
        s.add((1L << 22) + 1);
        assertThat(s.pageSlots()).isEqualTo(2);
        assertThat(s.contains(1L << 22)).isTrue();
        assertThat(s.contains((1L << 22) + 1)).isTrue();
        assertThat(s.contains(1)).isFalse();
    }
}
