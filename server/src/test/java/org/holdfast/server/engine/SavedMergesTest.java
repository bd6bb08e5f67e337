package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SavedMergesTest {

    @Test
    void take_inLookupOrderOrNewestFirst_findsEachMergeOnce() {
        SavedMerges s = new SavedMerges();
        byte[] a = s.add(1, 10);
        byte[] b = s.add(2, 10);
        byte[] c = s.add(3, 20);
        assertThat(s.take(3, 20)).isSameAs(c);
        assertThat(s.take(1, 10)).isSameAs(a);
        assertThat(s.take(1, 10)).as("given up once taken").isNull();
        assertThat(s.take(2, 11)).as("another count is another lookup").isNull();
        assertThat(s.take(2, 10)).isSameAs(b);
        assertThat(s.size()).isZero();
        assertThat(s.add(4, 3)).as("unfilled entries are misses").containsOnly((byte) -1);
    }

    @Test
    void add_pastTheLookupBound_dropsTheOldestOnly() {
        SavedMerges s = new SavedMerges();
        for (int k = 0; k < SavedMerges.MAX_LOOKUPS + 10; k++) {
            s.add(k, 4);
        }
        assertThat(s.size()).isEqualTo(SavedMerges.MAX_LOOKUPS);
        assertThat(s.take(9, 4)).isNull();
        assertThat(s.take(10, 4)).isNotNull();
        assertThat(s.take(SavedMerges.MAX_LOOKUPS + 9, 4)).isNotNull();
    }

    @Test
    void add_pastTheEntryBound_dropsTheOldestUntilItFits() {
        SavedMerges s = new SavedMerges();
        int big = SavedMerges.MAX_ENTRIES / 4;
        for (int k = 0; k < 5; k++) {
            s.add(k, big);
        }
        assertThat(s.size()).isEqualTo(4);
        assertThat(s.take(0, big)).isNull();
        assertThat(s.take(1, big)).hasSize(big);
    }
}
