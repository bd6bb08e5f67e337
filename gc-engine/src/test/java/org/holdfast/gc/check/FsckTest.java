package org.holdfast.gc.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.GcHarness;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each fsck finding is detected on a hand-made inconsistency. */
class FsckTest {
    private static final long NOW = 1_900_000_000_000L;

    @TempDir
    Path dir;

    /** One volume, one newest snapshot mapping {@code pbns}; store holds {@code stored}. */
    private static FsckReport check(GcHarness h, List<Long> newest, List<Long> older, long olderExpiry, Set<Long> stored) {
        return check(h, newest, older, olderExpiry, stored, FsckProgress.NONE);
    }

    private static FsckReport check(GcHarness h, List<Long> newest, List<Long> older, long olderExpiry, Set<Long> stored,
                                    FsckProgress progress) {
        FsckCatalog catalog = new FsckCatalog() {
            @Override
            public void forEachRetainedSnapshot(Consumer<RetainedSnapshot> v) {
                v.accept(new RetainedSnapshot(new VolumeId("v"), 2, NOW + 10, false, true));
                v.accept(new RetainedSnapshot(new VolumeId("v"), 1, olderExpiry, false, false));
            }

            @Override
            public void forEachPbn(RetainedSnapshot s, LongConsumer sink) {
                (s.sequence() == 2 ? newest : older).forEach(sink::accept);
            }
        };
        FsckBlockStore store = new FsckBlockStore() {
            @Override
            public BlockState state(long pbn) {
                return stored.contains(pbn) ? BlockState.PRESENT : BlockState.MISSING;
            }

            @Override
            public void forEachStoredPbn(LongConsumer visitor) {
                new TreeSet<>(stored).forEach(visitor::accept);
            }
        };
        return new Fsck(catalog, store, h.pipeline).run(NOW, progress);
    }

    /** Records what fsck reports; throws once {@code stopAfter} snapshots are marked, as a cancelled job does. */
    private static final class Recorder implements FsckProgress {
        final List<String> events = new java.util.ArrayList<>();
        final int stopAfter;

        Recorder(int stopAfter) {
            this.stopAfter = stopAfter;
        }

        @Override
        public void phase(String description) {
            events.add("phase " + description.substring(0, description.indexOf(':')));
        }

        @Override
        public void snapshotMarked(FsckCatalog.RetainedSnapshot s) {
            events.add("marked " + s.sequence());
            if (events.stream().filter(e -> e.startsWith("marked")).count() >= stopAfter) {
                throw new IllegalStateException("stop");
            }
        }
    }

    @Test
    void run_withProgress_reportsEachPhaseAndSnapshotInOrder() {
        try (GcHarness h = new GcHarness(dir, new MutableClock(NOW))) {
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 1, 1);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 2, NOW + 100);
            Recorder r = new Recorder(Integer.MAX_VALUE);
            FsckReport f = check(h, List.of(1L), List.of(2L), NOW + 50, Set.of(1L, 2L), r);
            assertThat(f.clean()).as(f.toText()).isTrue();
            assertThat(r.events).containsExactly("phase mark", "marked 2", "marked 1", "phase compare", "phase read back");
        }
    }

    @Test
    void run_progressThrows_checkStopsThere() {
        try (GcHarness h = new GcHarness(dir, new MutableClock(NOW))) {
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 1, 1);
            Recorder r = new Recorder(1);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> check(h, List.of(1L), List.of(2L), NOW + 50, Set.of(1L, 2L), r))
                    .hasMessage("stop");
            assertThat(r.events).containsExactly("phase mark", "marked 2");
        }
    }

    @Test
    void consistentState_clean() {
        try (GcHarness h = new GcHarness(dir, new MutableClock(NOW))) {
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 1, 1);
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 2, NOW + 100);
            FsckReport f = check(h, List.of(1L), List.of(2L), NOW + 50, Set.of(1L, 2L));
            assertThat(f.clean()).as(f.toText()).isTrue();
            assertThat(f.toText()).contains("result: clean");
        }
    }

    @Test
    void eachInconsistency_reported() {
        try (GcHarness h = new GcHarness(dir, new MutableClock(NOW))) {
            h.pipeline.appendSingle(UpdateKinds.RC_ADD, 1, 2);              // RC says 2, catalog 1
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 2, NOW + 10); // needed until NOW + 50
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 3, NOW - 10); // unreferenced, expired
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 4, NOW - 10); // referenced, will be freed
            h.sweep();                                                      // frees 3 and 4
            h.pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 6, NOW - 10); // leak past expiry
            FsckReport f = check(h, List.of(1L), List.of(2L, 4L, 5L), NOW + 50, Set.of(1L, 2L, 5L, 7L));
            assertThat(f.rcMismatches().samples()).contains(1L);
            assertThat(f.etMismatches().samples()).contains(2L); // 4 and 5 too: their ET is below 1's expiry
            assertThat(f.referencedButFreed().samples()).containsExactly(4L);
            assertThat(f.missingBlocks().samples()).containsExactly(4L);
            assertThat(f.leakedPastExpiry().samples()).containsExactly(6L);
            assertThat(f.untracked().samples()).containsExactly(7L);
            assertThat(f.dataLoss()).isTrue();
            assertThat(f.toText()).contains("DATA LOSS");
        }
    }
}
