package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.gc.bosc.UpdateBatch;
import org.junit.jupiter.api.Test;

/** A share is cut into GC_DELTA parts at the protocol's limit, every update once and in order; a bad one is refused whole. */
class GcDeltaPartsTest {
    private static final int MAX = ProtocolLimits.MAX_GC_DELTA_UPDATES;

    private static UpdateBatch share(int n) {
        UpdateBatch b = new UpdateBatch(n);
        for (int i = 0; i < n; i++) {
            b.add(i % 2 == 0 ? GcDelta.RC_ADD : GcDelta.RAISE_EXPIRY, 1000 + i, -i);
        }
        return b;
    }

    @Test
    void of_shareAtAndPastTheLimit_isCutIntoNumberedPartsKeepingEveryUpdateInOrder() {
        assertThat(GcDeltaParts.of(7, share(0))).isEmpty();
        assertThat(GcDeltaParts.of(7, share(MAX))).hasSize(1);
        GcDelta[] parts = GcDeltaParts.of(7, share(2 * MAX + 1));
        assertThat(parts).extracting(GcDelta::part).containsExactly(0, 1, 2);
        assertThat(parts).extracting(GcDelta::count).containsExactly(MAX, MAX, 1);
        assertThat(parts).extracting(GcDelta::opId).containsOnly(7L);
        int i = 0;
        int wrong = 0;
        for (GcDelta d : parts) {
            for (int j = 0; j < d.count(); j++, i++) {
                boolean same = d.pbns()[j] == 1000 + i && d.values()[j] == -i
                        && d.kinds()[j] == (i % 2 == 0 ? GcDelta.RC_ADD : GcDelta.RAISE_EXPIRY);
                wrong += same ? 0 : 1;
            }
        }
        assertThat(i).isEqualTo(2 * MAX + 1);
        assertThat(wrong).as("updates out of place").isZero();
    }

    @Test
    void of_anUpdateThatIsNoBlockInALaterPart_isRefusedBeforeAnyPartIsReturned() {
        UpdateBatch b = share(MAX);
        b.add(GcDelta.RC_ADD, 0, 1); // PBN 0, in part 1
        assertThatThrownBy(() -> GcDeltaParts.of(7, b)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PBN 0");
    }
}
