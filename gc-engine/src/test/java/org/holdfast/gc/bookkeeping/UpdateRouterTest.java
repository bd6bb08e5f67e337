package org.holdfast.gc.bookkeeping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;

class UpdateRouterTest {
    private static final long W = 1L << 48;
    private static final PbnRange MASTER = new PbnRange(1, W);
    private static final PbnRange W1 = new PbnRange(W, W + 1000);
    private static final PbnRange W2 = new PbnRange(W + 1000, W + 2000);

    private static UpdateBatch[] shares(int n) {
        UpdateBatch[] s = new UpdateBatch[n];
        for (int i = 0; i < n; i++) {
            s[i] = new UpdateBatch();
        }
        return s;
    }

    @Test
    void route_updatesOfThreeRanges_eachShareHoldsItsOwnInTheOperationsOrder() {
        // destinations given out of PBN order: the router sorts for lookup, not for numbering
        UpdateRouter r = new UpdateRouter(List.of(W2, MASTER, W1));
        UpdateBatch ops = new UpdateBatch();
        ops.add(UpdateKinds.RC_ADD, W + 1500, 1);
        ops.add(UpdateKinds.RC_ADD, 7, 1);
        ops.add(UpdateKinds.RC_ADD, W, -1);
        ops.add(UpdateKinds.RAISE_EXPIRY, W, 99);
        ops.add(UpdateKinds.PIN_ADD, W + 1999, 1);
        UpdateBatch[] s = shares(3);
        r.route(5, ops, s);
        assertThat(s[0].size()).isEqualTo(2);
        assertThat(new long[] {s[0].pbn(0), s[0].pbn(1)}).containsExactly(W + 1500, W + 1999);
        assertThat(s[1].size()).isEqualTo(1);
        assertThat(s[1].pbn(0)).isEqualTo(7);
        assertThat(s[2].size()).isEqualTo(2);
        assertThat(new int[] {s[2].kind(0), s[2].kind(1)}).as("order kept").containsExactly(UpdateKinds.RC_ADD, UpdateKinds.RAISE_EXPIRY);
        assertThat(s[2].value(1)).isEqualTo(99);
        assertThat(r.destinationOf(W + 999)).isEqualTo(2);
        assertThat(r.destinationOf(W + 2000)).isEqualTo(-1);
        assertThat(r.destinationOf(0)).isEqualTo(-1);
    }

    @Test
    void route_pbnInNoRange_refusedAndEveryShareLeftEmpty() {
        UpdateRouter r = new UpdateRouter(List.of(MASTER, W1));
        UpdateBatch[] s = shares(2);
        s[0].add(UpdateKinds.RC_ADD, 3, 1); // left over from an earlier operation: cleared too
        UpdateBatch ops = new UpdateBatch();
        ops.add(UpdateKinds.RC_ADD, 9, 1);
        ops.add(UpdateKinds.RC_ADD, W + 1000, 1);
        assertThatThrownBy(() -> r.route(8, ops, s)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("update 1 of GC operation 8 is for PBN " + (W + 1000) + ", which lies in no known PBN range")
                .hasMessageContaining("nothing of the operation was routed");
        assertThat(s[0].size()).isZero();
        assertThat(s[1].size()).isZero();
    }

    @Test
    void route_groupMarker_refused() {
        UpdateRouter r = new UpdateRouter(List.of(MASTER));
        UpdateBatch ops = new UpdateBatch();
        ops.add(UpdateBatch.GROUP_BEGIN, 1, 0);
        assertThatThrownBy(() -> r.route(1, ops, shares(1))).hasMessageContaining("is a group marker");
    }

    @Test
    void constructor_overlappingRanges_refused() {
        assertThatThrownBy(() -> new UpdateRouter(List.of(W1, new PbnRange(W + 999, W + 5000))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overlap");
    }
}
