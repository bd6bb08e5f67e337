package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class UnindexedLocationsTest {
    private static byte[] fp(int seed) {
        byte[] f = new byte[32];
        f[0] = (byte) seed;
        f[31] = (byte) (seed >> 8);
        return f;
    }

    @Test
    void indexOf_consecutiveAppendsPastCapacity_findsEachAndNothingOutside() {
        UnindexedLocations t = new UnindexedLocations(2, true);
        for (int i = 0; i < 5; i++) {
            t.add(100 + i, 3, 1000L * i, 40 + i, fp(i), 0);
        }
        assertThat(t.size()).isEqualTo(5);
        assertThat(t.indexOf(99)).isEqualTo(-1);
        assertThat(t.indexOf(105)).isEqualTo(-1);
        int i = t.indexOf(104);
        assertThat(i).isEqualTo(4);
        assertThat(t.offset(i)).isEqualTo(4000L);
        assertThat(t.location(i)).isEqualTo(44);
        byte[] out = new byte[40];
        t.copyFingerprint(i, out, 8);
        assertThat(out[8]).isEqualTo((byte) 4);
    }

    @Test
    void dropFirst_keepsLaterEntriesUnderTheirPbns() {
        UnindexedLocations t = new UnindexedLocations(4, true);
        for (int i = 0; i < 4; i++) {
            t.add(10 + i, 1, i, i, fp(i), 0);
        }
        t.dropFirst(3);
        assertThat(t.size()).isEqualTo(1);
        assertThat(t.indexOf(12)).isEqualTo(-1);
        assertThat(t.indexOf(13)).isZero();
        assertThat(t.pbn(0)).isEqualTo(13);
        assertThat(t.fingerprints()[0]).isEqualTo((byte) 3);
        t.dropFirst(1);
        assertThat(t.indexOf(13)).isEqualTo(-1);
    }

    @Test
    void add_gapInConsecutiveTable_refused() {
        UnindexedLocations t = new UnindexedLocations(4, true);
        t.add(10, 1, 0, 0, fp(0), 0);
        assertThatThrownBy(() -> t.add(12, 1, 0, 0, fp(1), 0)).isInstanceOf(IllegalStateException.class);
        assertThat(t.size()).isEqualTo(1);
    }

    @Test
    void repairsTable_anyPbnsKeptInOrder_noIndexOf() {
        UnindexedLocations t = new UnindexedLocations(1, false);
        t.add(50, 1, 0, 0, fp(0), 0);
        t.add(7, 2, 0, 0, fp(1), 0);
        assertThat(t.pbn(0)).isEqualTo(50);
        assertThat(t.pbn(1)).isEqualTo(7);
        assertThat(t.logId(1)).isEqualTo(2);
        assertThatThrownBy(() -> t.indexOf(7)).isInstanceOf(IllegalStateException.class);
        t.clear();
        assertThat(t.size()).isZero();
    }
}
