package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CompactionThresholdTest {

    @Test
    void check_shareInZeroToOne_returnsIt() {
        assertThat(CompactionThreshold.check(0, t -> "unused")).isZero();
        assertThat(CompactionThreshold.check(0.5, t -> "unused")).isEqualTo(0.5);
        assertThat(CompactionThreshold.check(1, t -> "unused")).isEqualTo(1.0);
    }

    @Test
    void check_shareOutsideOrNaN_refusedWithTheCallersWords() {
        for (double bad : new double[] {-0.01, 1.0001, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
            assertThatThrownBy(() -> CompactionThreshold.check(bad, t -> "x must be in 0..1, got " + t))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("x must be in 0..1, got " + bad);
        }
    }
}
