package org.holdfast.client.qcow2;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.holdfast.client.scan.DataRegions;
import org.junit.jupiter.api.Test;

/** Data and holes from the data ranges of a base:allocation map. */
class ZeroExtentRegionsTest {
    // data at [100, 200) and [500, 600) of 1000 bytes
    final ZeroExtentRegions r = ZeroExtentRegions.of(1000, List.of(new long[] {100, 100}, new long[] {500, 100}));

    @Test
    void nextData_skipsHoles_andEndsAfterTheLastRange() {
        assertThat(r.nextData(0)).isEqualTo(100);
        assertThat(r.nextData(150)).isEqualTo(150);
        assertThat(r.nextData(200)).isEqualTo(500);
        assertThat(r.nextData(599)).isEqualTo(599);
        assertThat(r.nextData(600)).isEqualTo(DataRegions.NO_MORE_DATA);
        assertThat(r.nextData(1000)).isEqualTo(DataRegions.NO_MORE_DATA);
    }

    @Test
    void nextHole_isTheEndOfTheRangeOrTheOffsetItself() {
        assertThat(r.nextHole(100)).isEqualTo(200);
        assertThat(r.nextHole(199)).isEqualTo(200);
        assertThat(r.nextHole(200)).isEqualTo(200);
        assertThat(r.nextHole(550)).isEqualTo(600);
        assertThat(r.nextHole(700)).isEqualTo(700);
        assertThat(ZeroExtentRegions.of(10, List.of(new long[] {0, 10})).nextHole(3)).isEqualTo(10);
        assertThat(r.findsHoles()).isTrue();
    }
}
