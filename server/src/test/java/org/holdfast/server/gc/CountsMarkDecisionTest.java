package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.Register;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link CountsMarkDecision}: when a worker's counts mark at REGISTER lifts, keeps or sets its counts fence. */
class CountsMarkDecisionTest {
    private static final PbnRange RANGE = new PbnRange(1L << 48, (1L << 48) + (1L << 40));
    private static final long NEXT_OP = 1L << 32;
    private static final long FLOOR = GcDelta.deltaId(NEXT_OP - 1, GcDelta.MAX_PART);
    private static final WorkerCountsFences.Fence FENCE = new WorkerCountsFences.Fence(2, FLOOR, 1L);
    /** Acknowledged by the lost master's operations, below the restored counter. */
    private static final long OLD_ACK = GcDelta.deltaId(40, 0);

    private static CountsMarkDecision.Verdict decide(boolean firstTime, WorkerCountsFences.Fence fence, Register.Counts c) {
        return CountsMarkDecision.decide(2, RANGE, firstTime, fence, c, NEXT_OP);
    }

    @TempDir
    java.nio.file.Path dir;

    /**
     * A brand-new master (no GC operation yet) fences a node with counts at the mark its export gives:
     * never 0, so the import of that export lifts the fence at once (with mark 0 the import read as "imported
     * no counts" and the fence stayed until the first commit and another export).
     */
    @Test
    void brandNewMaster_fencesAtTheMarkOfItsFirstExport_neverZero_andTheImportOfThatExportLifts() {
        long exported;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            exported = WorkerGcExport.markOf(new Catalog(db), 2);
        }
        assertThat(exported).as("an export from a catalog that ran no GC operation").isEqualTo(WorkerGcExport.FIRST_MARK).isPositive()
                .isLessThan(GcDelta.deltaId(1, 0));
        CountsMarkDecision.Verdict fenced = CountsMarkDecision.decide(2, RANGE, true, null, new Register.Counts(0, 0, OLD_ACK), 1);
        assertThat(fenced.action()).isEqualTo(CountsMarkDecision.Action.FENCE);
        assertThat(fenced.floor()).isEqualTo(exported);
        WorkerCountsFences.Fence fence = new WorkerCountsFences.Fence(2, fenced.floor(), 1L);
        assertThat(CountsMarkDecision.decide(2, RANGE, false, fence, new Register.Counts(exported, RANGE.first(), 0), 1).action())
                .as("the worker imported that export").isEqualTo(CountsMarkDecision.Action.LIFT);
        assertThat(CountsMarkDecision.decide(2, RANGE, false, fence, new Register.Counts(0, 0, 0), 1).action())
                .as("no import: kept").isEqualTo(CountsMarkDecision.Action.KEEP);
    }

    @Test
    void fenced_importedAtOrAboveTheFloorForItsRange_lifted() {
        CountsMarkDecision.Verdict v = decide(false, FENCE, new Register.Counts(FLOOR, RANGE.first(), OLD_ACK));
        assertThat(v.action()).isEqualTo(CountsMarkDecision.Action.LIFT);
        assertThat(v.why()).isEqualTo("lifted the counts fence of worker 2: it imported counts exported at mark " + FLOOR);
        assertThat(CountsMarkDecision.decide(2, RANGE, false, FENCE, new Register.Counts(FLOOR + 5, RANGE.first(),
                GcDelta.deltaId(NEXT_OP + 3, 0)), NEXT_OP + 10).action()).as("and logged this master's deltas since")
                .isEqualTo(CountsMarkDecision.Action.LIFT);
    }

    @Test
    void fenced_noImportOrOneBeforeTheRestoreOrForAnotherRange_kept() {
        assertThat(decide(false, FENCE, new Register.Counts(0, 0, OLD_ACK)).why()).contains("imported no counts")
                .as("says what lifts it").contains("gc-rebuild --worker 2 --out FILE", "worker-gc-import --file FILE");
        assertThat(decide(false, FENCE, Register.Counts.NONE).action()).isEqualTo(CountsMarkDecision.Action.KEEP);
        assertThat(decide(false, FENCE, new Register.Counts(FLOOR - 1, RANGE.first(), OLD_ACK)).why())
                .contains("exported at mark " + (FLOOR - 1) + ", before the catalog restore");
        assertThat(decide(false, FENCE, new Register.Counts(FLOOR, RANGE.limit(), OLD_ACK)).why())
                .contains("for the range starting at PBN " + RANGE.limit());
        assertThat(decide(false, new WorkerCountsFences.Fence(2, -1, -1), new Register.Counts(FLOOR, RANGE.first(), 0)).why())
                .as("an unreadable fence is lifted by hand only").contains("does not read", "--counts-imported");
    }

    @Test
    void unfenced_countsOfAnotherMaster_fencedAtTheMarkAnExportGivesNow() {
        CountsMarkDecision.Verdict first = decide(true, null, new Register.Counts(0, 0, OLD_ACK));
        assertThat(first.action()).as("a node this registry never knew, with counts").isEqualTo(CountsMarkDecision.Action.FENCE);
        assertThat(first.floor()).isEqualTo(FLOOR);
        assertThat(first.why()).contains("fenced worker 2", "first time");
        CountsMarkDecision.Verdict above = decide(false, null, new Register.Counts(0, 0, GcDelta.deltaId(NEXT_OP, 0)));
        assertThat(above.action()).as("acknowledged an operation this master never issued").isEqualTo(CountsMarkDecision.Action.FENCE);
        assertThat(above.why()).contains("never issued");
        assertThat(decide(false, null, new Register.Counts(0, 0, Register.Counts.UNKNOWN)).action())
                .isEqualTo(CountsMarkDecision.Action.FENCE);
        assertThat(decide(true, FENCE, new Register.Counts(FLOOR, RANGE.first(), OLD_ACK)).action())
                .as("stale counts never lift a fence").isEqualTo(CountsMarkDecision.Action.KEEP);
    }

    @Test
    void unfenced_newEmptyNodeOrOwnCounts_nothing() {
        assertThat(decide(true, null, Register.Counts.NONE).action()).isEqualTo(CountsMarkDecision.Action.NONE);
        assertThat(decide(false, null, new Register.Counts(0, 0, GcDelta.deltaId(NEXT_OP - 1, 3))).action())
                .isEqualTo(CountsMarkDecision.Action.NONE);
    }
}
