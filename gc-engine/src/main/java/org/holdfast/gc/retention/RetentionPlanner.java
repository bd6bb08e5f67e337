package org.holdfast.gc.retention;

import java.util.ArrayList;
import java.util.List;

/**
 * Decides, for one volume at time {@code now}, which snapshots to delete from the catalog, which to
 * pin because keep-last still wants them past their fixed expiry, and which keep-last pins to
 * release. Run it before every sweep: a snapshot is only ever deleted when its expiry has passed
 * (so the sweep frees nothing a retained snapshot still needs), and a keep-last pin is placed in
 * the same cycle, before the sweep, in which the fixed expiry would otherwise let the sweep free
 * the snapshot's blocks.
 *
 * <p>Order the caller must follow: delete from the catalog, then release pins; place pins (and wait
 * for them to reach the GMA) before sweeping.
 */
public final class RetentionPlanner {

    /** One snapshot as the planner sees it. */
    public record SnapshotState(long sequence, long expiry, boolean held, boolean keepLastPinned) {
    }

    /** What to do. */
    public record Plan(List<Long> delete, List<Long> pinForKeepLast, List<Long> releaseKeepLastPin) {
    }

    /**
     * @param snapshots the volume's retained snapshots, ascending sequence
     * @param keepLast  the policy's keep-last count (the newest snapshot is always kept)
     */
    public Plan plan(List<SnapshotState> snapshots, int keepLast, long now) {
        List<Long> delete = new ArrayList<>();
        List<Long> pin = new ArrayList<>();
        List<Long> release = new ArrayList<>();
        int window = Math.max(1, keepLast);
        int n = snapshots.size();
        for (int i = 0; i < n; i++) {
            SnapshotState s = snapshots.get(i);
            boolean inWindow = i >= n - window;
            if (inWindow) {
                if (s.expiry() <= now && !s.held() && !s.keepLastPinned() && i < n - 1) {
                    // the newest snapshot needs no pin: its blocks are the volume's current state (RC > 0)
                    pin.add(s.sequence());
                }
                continue;
            }
            if (s.keepLastPinned()) {
                if (s.expiry() < now && !s.held()) {
                    delete.add(s.sequence());
                }
                release.add(s.sequence());
            } else if (s.expiry() < now && !s.held()) {
                delete.add(s.sequence());
            }
        }
        return new Plan(delete, pin, release);
    }
}
