package org.holdfast.server.gc;

import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.Register;

/**
 * What a master with {@code data=workers} does with a worker's counts mark at REGISTER (cluster
 * version 7, {@link Register.Counts}): lift the worker's counts fence, keep it, fence the worker, or
 * nothing. Pure: {@link RegistrationCountsFence} reads the catalog and applies the verdict.
 *
 * <p>Stale counts, which are fenced: the worker holds counts ({@link Register.Counts#any()}) that
 * this master cannot account for, i.e.
 * <ul>
 * <li>its registration is the first of its worker id here (a new record) while it reports counts: this
 *     master never sent it a GC delta, so they were kept by another master's deltas (a node a
 *     restored master registered, back after the same backup was restored again: the registry does
 *     not know it, and its counts hold references the catalog never made, or lack ones it has), or</li>
 * <li>it acknowledged a GC delta whose operation id is at or above this master's next one (or its mark
 *     does not read): deltas this master never issued, so from a master whose catalog this one
 *     does not hold (a lost master's after a restore whose jump was too short, another cluster's).</li>
 * </ul>
 * Lifted: a fenced worker whose imported counts file is for its range and has a mark at or above the
 * fence's floor (exported from this catalog after the restore), and whose counts are not stale. A
 * fence whose value does not read (floor unknown) is never lifted here.
 */
public final class CountsMarkDecision {
    /** What to do. */
    public enum Action { NONE, LIFT, KEEP, FENCE }

    /** The verdict: the action, the floor of a new fence, and why, in words for the log and the audit. */
    public record Verdict(Action action, long floor, String why) {
    }

    private CountsMarkDecision() {
    }

    /**
     * @param workerId  the worker registering
     * @param range     its PBN range in the registry
     * @param firstTime whether this registration created its record
     * @param fence     its counts fence, or null
     * @param counts    what it reported
     * @param nextOpId  this master's next GC operation id ({@code gc.next-op-id})
     */
    public static Verdict decide(long workerId, PbnRange range, boolean firstTime, WorkerCountsFences.Fence fence,
                                 Register.Counts counts, long nextOpId) {
        String stale = !counts.any() ? null
                : firstTime ? "it registered here for the first time but holds GC counts (imported mark " + counts.importedMark()
                        + ", acknowledged GC delta " + counts.acknowledged() + ") that another master's deltas kept"
                : counts.acknowledged() == Register.Counts.UNKNOWN ? "its acknowledged GC delta mark does not read"
                : GcDelta.opIdOf(counts.acknowledged()) >= nextOpId ? "it acknowledged GC delta " + counts.acknowledged()
                        + " (operation " + GcDelta.opIdOf(counts.acknowledged()) + "), which this master never issued (its next"
                        + " operation is " + nextOpId + "): its counts were kept by a master whose catalog this one does not hold"
                : null;
        if (stale != null) {
            // what an export gives from now on; never 0, also on a master that ran no GC operation yet, so an import lifts it
            long floor = WorkerGcExport.markByCounter(nextOpId);
            return fence != null ? new Verdict(Action.KEEP, fence.floor(), "the counts fence of worker " + workerId + " stays: "
                    + stale)
                    : new Verdict(Action.FENCE, floor, "fenced worker " + workerId + ": " + stale);
        }
        if (fence == null) {
            return new Verdict(Action.NONE, 0, null);
        }
        String keep = fence.floor() < 0 ? "its fence's record does not read; lift it with gc-rebuild --worker " + workerId
                + " --counts-imported FILE"
                : counts.importedMark() == 0 ? "it imported no counts since its GC metadata was created"
                : counts.importedPbnFirst() != range.first() ? "the counts it imported are for the range starting at PBN "
                        + counts.importedPbnFirst() + ", it owns " + range
                : counts.importedMark() < fence.floor() ? "the counts it imported were exported at mark " + counts.importedMark()
                        + ", before the catalog restore (the fence's floor is " + fence.floor() + ")"
                : null;
        if (keep != null) {
            // the operator reads this in the log or audit: name what lifts it (an unreadable fence's text already does)
            String next = fence.floor() < 0 ? "" : "; rebuild its counts from this catalog: with master and worker stopped,"
                    + " gc-rebuild --worker " + workerId + " --out FILE on the master, worker-gc-import --file FILE on the worker,"
                    + " then start both";
            return new Verdict(Action.KEEP, fence.floor(), "the counts fence of worker " + workerId + " stays: " + keep + next);
        }
        return new Verdict(Action.LIFT, fence.floor(), "lifted the counts fence of worker " + workerId + ": it imported counts"
                + " exported at mark " + counts.importedMark());
    }
}
