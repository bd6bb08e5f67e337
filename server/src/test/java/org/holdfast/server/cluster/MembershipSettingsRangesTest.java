package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.junit.jupiter.api.Test;

/** The worker range layout and its inverse, which a worker uses knowing only its own id and range. */
class MembershipSettingsRangesTest {

    private static MembershipSettings cut(long first, long size) {
        return new MembershipSettings(Duration.ofSeconds(2), Duration.ofSeconds(6), Duration.ofSeconds(15), first, size);
    }

    @Test
    void rangeOf_workersOneTwoThree_adjacentFromFirstPbn() {
        MembershipSettings s = MembershipSettings.defaults();
        long first = MembershipSettings.DEFAULT_FIRST_PBN;
        long size = MembershipSettings.DEFAULT_RANGE_SIZE;
        assertThat(s.rangeOf(1)).isEqualTo(new PbnRange(first, first + size));
        assertThat(s.rangeOf(2)).isEqualTo(new PbnRange(first + size, first + 2 * size));
        assertThat(s.rangeOf(3).first()).isEqualTo(s.rangeOf(2).limit());
    }

    @Test
    void firstPbnOf_anyWorkersRange_givesBackTheFirstPbnItWasCutFrom() {
        for (MembershipSettings s : new MembershipSettings[] {MembershipSettings.defaults(), cut(1000, 7), cut(1, 1)}) {
            for (long id : new long[] {1, 2, 3, 1000}) {
                PbnRange r = s.rangeOf(id);
                assertThat(MembershipSettings.firstPbnOf(id, r.first(), r.limit())).as("worker %d of %s", id, s).isEqualTo(s.firstPbn());
            }
        }
    }

    @Test
    void firstPbnOf_notTheLayout_zero() {
        assertThat(MembershipSettings.firstPbnOf(3, 5, 10)).as("would start below 1").isZero();
        assertThat(MembershipSettings.firstPbnOf(0, 5, 10)).as("no worker 0").isZero();
        assertThat(MembershipSettings.firstPbnOf(1, 10, 10)).as("empty range").isZero();
        assertThat(MembershipSettings.firstPbnOf(1, 0, 10)).as("PBN 0 is the zero block").isZero();
        assertThat(MembershipSettings.firstPbnOf(Long.MAX_VALUE, 1L << 48, (1L << 48) + (1L << 40))).as("overflow").isZero();
    }

    @Test
    void rangeOf_pastThePbnSpace_throwsArithmetic() {
        assertThatThrownBy(() -> cut(1L << 48, 1L << 40).rangeOf(1L << 30)).isInstanceOf(ArithmeticException.class);
    }
}
