package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Two digests are the same only for the same entries in the same order: any changed field, order or count differs. */
class GmaEntryDigestTest {
    private static GmaEntryDigest of(long[]... entries) {
        GmaEntryDigest d = new GmaEntryDigest();
        for (long[] e : entries) {
            d.add(e[0], (int) e[1], (int) e[2], e[3]);
        }
        return d;
    }

    @Test
    void sameAs_sameEntriesInOrder_isTrue_anyDifferenceIsFalse() {
        long[] a = {100, 1, 0, 5_000};
        long[] b = {101, 0, 2, 6_000};
        assertThat(of(a, b).sameAs(of(a, b))).isTrue();
        assertThat(of().sameAs(of())).isTrue();
        assertThat(of(a, b).sameAs(of(b, a))).as("order").isFalse();
        assertThat(of(a, b).sameAs(of(a))).as("count").isFalse();
        for (int field = 0; field < 4; field++) {
            long[] changed = b.clone();
            changed[field]++;
            assertThat(of(a, b).sameAs(of(a, changed))).as("field %d", field).isFalse();
        }
        GmaEntryDigest d = of(a, b);
        assertThat(d.entries()).isEqualTo(2);
    }
}
