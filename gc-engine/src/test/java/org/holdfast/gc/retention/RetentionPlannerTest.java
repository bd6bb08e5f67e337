package org.holdfast.gc.retention;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.holdfast.gc.retention.RetentionPlanner.SnapshotState;
import org.junit.jupiter.api.Test;

class RetentionPlannerTest {
    private final RetentionPlanner planner = new RetentionPlanner();

    @Test
    void plan_expiredOutsideWindow_deleted_heldKept_newestNeverTouched() {
        List<SnapshotState> s = List.of(new SnapshotState(1, 50, false, false), new SnapshotState(2, 50, true, false),
                new SnapshotState(3, 500, false, false), new SnapshotState(4, 50, false, false));
        RetentionPlanner.Plan p = planner.plan(s, 0, 100);
        assertThat(p.delete()).containsExactly(1L);
        assertThat(p.pinForKeepLast()).isEmpty();
    }

    @Test
    void plan_keepLastWindowPastExpiry_pinned_thenReleasedAndDeletedWhenOut() {
        List<SnapshotState> s = List.of(new SnapshotState(1, 50, false, false), new SnapshotState(2, 60, false, false),
                new SnapshotState(3, 70, false, false));
        RetentionPlanner.Plan p = planner.plan(s, 2, 100);
        assertThat(p.delete()).containsExactly(1L);
        assertThat(p.pinForKeepLast()).containsExactly(2L); // 3 is the newest: its blocks have RC > 0
        List<SnapshotState> later = List.of(new SnapshotState(2, 60, false, true), new SnapshotState(3, 70, false, false),
                new SnapshotState(4, 900, false, false));
        RetentionPlanner.Plan q = planner.plan(later, 2, 100);
        assertThat(q.delete()).containsExactly(2L);
        assertThat(q.releaseKeepLastPin()).containsExactly(2L);
        assertThat(q.pinForKeepLast()).containsExactly(3L);
    }
}
