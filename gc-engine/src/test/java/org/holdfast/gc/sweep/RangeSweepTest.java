package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.GcHarness;
import org.holdfast.gc.GmaProbe;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** BOSC and the sweep over a worker's PBN range: updates land in range, the sweep frees only range PBNs, others are refused. */
class RangeSweepTest {
    private static final long T0 = 1_800_000_000_000L;
    private static final long FIRST = 1L << 40;
    private static final PbnRange RANGE = new PbnRange(FIRST, FIRST + (1L << 30));

    @TempDir
    Path dir;

    private GcHarness harness(MutableClock clock) {
        return new GcHarness(dir, clock, BoscSettings.defaults().withCommitIdle(Duration.ofMillis(1)), Duration.ofHours(6), RANGE);
    }

    @Test
    void sweep_rangeAt2To40_freesOnlyUnreferencedRangeBlocksAndSurvivesReopen() {
        MutableClock clock = new MutableClock(T0);
        long a = FIRST;
        long b = FIRST + 1;
        long far = FIRST + 20_000; // a third chunk of the range
        try (GcHarness h = harness(clock)) {
            UpdateBatch inc = new UpdateBatch();
            inc.add(UpdateKinds.RC_ADD, a, 1);
            inc.add(UpdateKinds.RC_ADD, b, 1);
            inc.add(UpdateKinds.RC_ADD, far, 1);
            h.pipeline.appendGroup(1, inc);
            UpdateBatch dec = new UpdateBatch();
            dec.add(UpdateKinds.RC_ADD, a, -1);
            dec.add(UpdateKinds.RC_ADD, far, -1);
            h.pipeline.appendGroup(2, dec);
            SweepReport r = h.sweep();
            assertThat(h.reclaimed).containsExactlyInAnyOrder(a, far);
            assertThat(r.freed()).isEqualTo(2);
            assertThat(GmaProbe.freed(h.pipeline, a)).isTrue();
            assertThat(GmaProbe.rc(h.pipeline, b)).isEqualTo(1);
            assertThat(h.pipeline.chunkLimit()).as("chunks from the range's first PBN").isEqualTo(3);
        }
        try (GcHarness h = harness(clock)) {
            assertThat(GmaProbe.dump(h.pipeline)).containsOnlyKeys(a, b, far);
            assertThat(GmaProbe.freed(h.pipeline, far)).isTrue();
            assertThat(GmaProbe.rc(h.pipeline, b)).isEqualTo(1);
            assertThat(h.sweep().freed()).isZero();
        }
    }

    @Test
    void append_pbnOutsideRange_refusedBeforeAnythingIsLogged() {
        MutableClock clock = new MutableClock(T0);
        try (GcHarness h = harness(clock)) {
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, FIRST + 5, 1);
            long logged = h.pipeline.updatesLogged();
            UpdateBatch mixed = new UpdateBatch();
            mixed.add(UpdateKinds.RC_ADD, FIRST + 6, 1);
            mixed.add(UpdateKinds.RC_ADD, RANGE.limit(), 1); // the next worker's first PBN
            assertThatThrownBy(() -> h.pipeline.appendGroup(7, mixed)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("PBN " + RANGE.limit()).hasMessageContaining(RANGE.toString())
                    .hasMessageContaining("nothing was logged");
            assertThatThrownBy(() -> h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, FIRST - 1, T0))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> h.pipeline.appendSingles(UpdateKinds.RAISE_EXPIRY, new long[] {FIRST + 7, 1}, 0, 2, T0))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(h.pipeline.updatesLogged()).isEqualTo(logged);
            assertThat(GmaProbe.dump(h.pipeline)).containsOnlyKeys(FIRST + 5);
        }
    }
}
