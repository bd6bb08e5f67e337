package org.holdfast.gc.bookkeeping;

import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.gc.retention.RangeMaxExpiry;

/** One change the GC must account for; the server records it in the catalog under an operation id. */
public sealed interface GcOperation {

    /**
     * Snapshot {@code sequence} of {@code volume} committed {@code delta}. {@code expiries} holds the
     * volume's retained snapshots before this one (correction 2).
     */
    record Commit(VolumeId volume, long sequence, List<DeltaEntry> delta, RangeMaxExpiry expiries)
            implements GcOperation {
    }

    /**
     * One part of a large commit's bookkeeping, logged as its own operation so that no group holds
     * the whole delta: a slice of snapshot {@code sequence}'s delta (in LBN order), of which only
     * the increments (RC + 1 of each new PBN) or only the decrements (RC − 1 and the ET raise of
     * each replaced PBN) are logged. The server logs every increments part of a commit before its
     * first decrements part, so no count ever drops below the truth while the parts are logged.
     */
    record CommitPart(VolumeId volume, long sequence, List<DeltaEntry> slice, RangeMaxExpiry expiries, boolean decrements)
            implements GcOperation {
    }

    /** A hold (retention lock, legal hold, keep-last extension) on a snapshot: pin its PBNs. */
    record Pin(long[] pbns) implements GcOperation {
    }

    /** Releases a hold placed with the same PBNs. */
    record Unpin(long[] pbns) implements GcOperation {
    }

    /**
     * A volume's newest state was deleted by an operator: RC − 1 for each mapped PBN (one entry per
     * mapped LBN, so a PBN mapped twice appears twice). ETs are left as they are (see the server's
     * volume deletion for why).
     */
    record Release(long[] pbns) implements GcOperation {
    }

    /** A snapshot's retention was extended: ET = max(ET, expiry) for all its PBNs. */
    record RaiseExpiry(long[] pbns, long expiry) implements GcOperation {
    }
}
