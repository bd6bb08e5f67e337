package org.holdfast.server.ingest.cluster;

import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.MembershipSettings;

/**
 * The PBNs of the other workers' ranges, as a worker sees them from its registration: every PBN from
 * the first worker range's start on ({@link MembershipSettings#firstPbnOf}, the layout's inverse: the
 * worker ranges lie above all of the master's own PBNs) outside its own.
 * With data on the workers its engine never records one of them (an entry is recorded on the worker
 * that stores its block), so a forget of one (a stale mark the master forwarded) goes through the
 * engine's gate ({@code forgetIfHeld}); the master's own PBNs and the worker's own keep the full forget.
 */
record OtherRangePbns(long firstWorkerPbn, PbnRange own) {

    /** From the worker id and range in {@code r}; null (no gate) if they do not fit the layout. */
    static OtherRangePbns of(Registered r) {
        long first = MembershipSettings.firstPbnOf(r.workerId(), r.pbnFirst(), r.pbnLimit());
        return first < 1 ? null : new OtherRangePbns(first, new PbnRange(r.pbnFirst(), r.pbnLimit()));
    }

    /** True if {@code pbn} lies in another worker's range. */
    boolean contains(long pbn) {
        return pbn >= firstWorkerPbn && !own.contains(pbn);
    }

    /**
     * Turns the entries of a lookup answer ({@code pbns}, {@code runs}, {@code n} entries) that name a PBN of
     * another worker's range into misses, and shortens the runs that went through them; returns how many.
     */
    int asMisses(long[] pbns, int[] runs, int n) {
        int missed = 0;
        for (int i = n - 1; i >= 0; i--) {
            if (pbns[i] != 0 && contains(pbns[i])) {
                pbns[i] = 0;
                missed++;
            }
            if (pbns[i] == 0) {
                runs[i] = 0;
            } else if (runs[i] > 1) {
                runs[i] = i + 1 < n ? Math.min(runs[i], 1 + runs[i + 1]) : 1; // a run ends where an entry became a miss
            }
        }
        return missed;
    }
}
