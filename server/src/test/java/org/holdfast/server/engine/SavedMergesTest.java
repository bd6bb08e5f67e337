package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SavedMergesTest {

    /** Keeps a new merge of {@code count} entries for {@code key}; returns it. */
    private static SavedMerges.Merge keep(SavedMerges s, long key, int count) {
        SavedMerges.Merge m = new SavedMerges.Merge(count);
        s.keep(key, m);
        return m;
    }

    @Test
    void take_inLookupOrderOrNewestFirst_findsEachMergeOnce() {
        SavedMerges s = new SavedMerges();
        SavedMerges.Merge a = keep(s, 1, 10);
        SavedMerges.Merge b = keep(s, 2, 10);
        SavedMerges.Merge c = keep(s, 3, 20);
        assertThat(s.take(3, 20)).isSameAs(c);
        assertThat(s.take(1, 10)).isSameAs(a);
        assertThat(s.take(1, 10)).as("given up once taken").isNull();
        assertThat(s.take(2, 11)).as("another count is another lookup").isNull();
        assertThat(s.take(2, 10)).isSameAs(b);
        assertThat(s.size()).isZero();
    }

    @Test
    void take_keptMerge_returnsResolverAndStorerAsFilled() {
        SavedMerges s = new SavedMerges();
        SavedMerges.Merge m = keep(s, 7, 3);
        m.resolver[1] = 2;
        m.storer[0] = 2;
        SavedMerges.Merge t = s.take(7, 3);
        assertThat(t.resolver).containsExactly(0, 2, 0);
        assertThat(t.storer).containsExactly(2, 0, 0);
    }

    @Test
    void keep_pastTheLookupBound_dropsTheOldestOnly() {
        SavedMerges s = new SavedMerges();
        for (int k = 0; k < SavedMerges.MAX_LOOKUPS + 10; k++) {
            keep(s, k, 4);
        }
        assertThat(s.size()).isEqualTo(SavedMerges.MAX_LOOKUPS);
        assertThat(s.take(9, 4)).isNull();
        assertThat(s.take(10, 4)).isNotNull();
        assertThat(s.take(SavedMerges.MAX_LOOKUPS + 9, 4)).isNotNull();
    }

    @Test
    void keep_pastTheEntryBound_dropsTheOldestUntilItFits() {
        SavedMerges s = new SavedMerges();
        int big = SavedMerges.MAX_ENTRIES / 4;
        for (int k = 0; k < 5; k++) {
            keep(s, k, big);
        }
        assertThat(s.size()).isEqualTo(4);
        assertThat(s.take(0, big)).isNull();
        assertThat(s.take(1, big).count()).isEqualTo(big);
    }
}
