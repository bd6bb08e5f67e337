package org.holdfast.gc.bookkeeping;

import java.util.List;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.gc.retention.RangeMaxExpiry;

/**
 * Turns GC operations into GMA updates (thesis 5.5, hybrid GC), logged as one group per operation.
 *
 * <h2>Per delta entry (lbn, before, birth, new) of snapshot N</h2>
 * All increments first, then the decrements: RC(new) + 1; RC(before) − 1 and
 * ET(before) = max(ET(before), max expiry of the volume's snapshots birth..N−1). Correction 1: ET
 * is raised on every dereference, not only when RC reaches 0, because RC counts all volumes and a
 * short-retention volume's dereference would otherwise leave a long-retention volume's old
 * snapshot unprotected. Correction 2: the expiry is the range maximum, not the volume's single
 * period. PBN 0 (zero block) is never counted. Cost: at most 3 updates per entry, O(delta).
 *
 * <h2>Crash atomicity with the catalog</h2>
 * The server gives every operation an id from a counter stored in the same RocksDB write batch as
 * the catalog change (for a commit: the snapshot's entries and a compact commit record), written
 * with sync. Only then does it call {@link #apply}. {@link #apply} ignores an id at or below
 * {@link #lastAppliedOp()}, and a group reaches the GMA only if its END record is in the log.
 * Recovery: open the pipeline (log replay), then for every operation in the catalog with an id
 * above {@link #lastAppliedOp()}, in id order, call {@link #apply} again. So a snapshot that did
 * not commit never has its decrements applied (it has no id in the catalog), and one that did
 * is never lost (re-driven) nor counted twice (ids at or below the durable mark are ignored).
 * Calls must come in increasing id order (the server holds its commit lock). A large commit is
 * several operations with consecutive ids ({@link GcOperation.CommitPart}: all increments parts,
 * then all decrements parts), so no group holds its whole delta; the same rules apply to each part.
 */
public final class GcBookkeeper {
    private final BoscPipeline pipeline;

    public GcBookkeeper(BoscPipeline pipeline) {
        this.pipeline = pipeline;
    }

    /** Highest operation id in the log; after a restart, the highest durably logged one. */
    public long lastAppliedOp() {
        return pipeline.lastOpId();
    }

    /**
     * Logs operation {@code opId}. Returns false (and changes nothing) if it was already logged.
     * Blocks while the BOSC queues are full.
     */
    public synchronized boolean apply(long opId, GcOperation op) {
        if (opId <= pipeline.lastOpId()) {
            return false;
        }
        UpdateBatch b = updatesOf(op);
        pipeline.appendGroup(opId, b);
        return true;
    }

    /**
     * The GMA updates of one operation, increments before decrements. Validates before anything is
     * logged. Public for distributed GC, which routes them by PBN range ({@link UpdateRouter}).
     */
    public static UpdateBatch updatesOf(GcOperation op) {
        if (op instanceof GcOperation.Commit c) {
            return commitUpdates(c.volume(), c.sequence(), c.delta(), c.expiries(), true, true);
        } else if (op instanceof GcOperation.CommitPart c) {
            return commitUpdates(c.volume(), c.sequence(), c.slice(), c.expiries(), !c.decrements(), c.decrements());
        } else if (op instanceof GcOperation.Pin p) {
            return each(p.pbns(), UpdateKinds.PIN_ADD, 1);
        } else if (op instanceof GcOperation.Unpin u) {
            return each(u.pbns(), UpdateKinds.PIN_ADD, -1);
        } else if (op instanceof GcOperation.Release r) {
            return each(r.pbns(), UpdateKinds.RC_ADD, -1);
        } else if (op instanceof GcOperation.RaiseExpiry r) {
            return each(r.pbns(), UpdateKinds.RAISE_EXPIRY, r.expiry());
        }
        throw new IllegalArgumentException("unknown GC operation " + op);
    }

    /** A commit's (or one part's) increments and/or decrements, increments first. */
    private static UpdateBatch commitUpdates(org.holdfast.common.id.VolumeId volume, long seq, List<DeltaEntry> delta,
                                             RangeMaxExpiry ex, boolean increments, boolean decrements) {
        // Two passes over the entries (each get() may build a short-lived object) instead of
        // copies of the whole delta: the batch is sized exactly, so a commit costs the heap only
        // the updates it logs (a first backup: one per block, not three).
        int n = delta.size();
        int updates = 0;
        for (DeltaEntry e : delta) {
            if (e.beforePbn() < 0 || e.newPbn() < 0) {
                throw new IllegalArgumentException("negative PBN in delta of " + volume + "@" + seq + ": " + e);
            }
            if (e.beforePbn() != 0 && (e.beforeBirthSequence() < 1 || e.beforeBirthSequence() >= seq)) {
                throw new IllegalArgumentException("birth sequence of " + e + " must be in 1.." + (seq - 1));
            }
            if (e.newPbn() != e.beforePbn()) {
                updates += (increments && e.newPbn() != 0 ? 1 : 0) + (decrements && e.beforePbn() != 0 ? 2 : 0);
            }
        }
        UpdateBatch b = new UpdateBatch(Math.max(1, updates));
        for (int k = 0; k < n && increments; k++) {
            DeltaEntry e = delta.get(k);
            if (e.newPbn() != 0 && e.newPbn() != e.beforePbn()) {
                b.add(UpdateKinds.RC_ADD, e.newPbn(), 1);
            }
        }
        for (int k = 0; k < n && decrements; k++) {
            DeltaEntry e = delta.get(k);
            if (e.beforePbn() != 0 && e.newPbn() != e.beforePbn()) {
                b.add(UpdateKinds.RC_ADD, e.beforePbn(), -1);
                long expiry = ex.max(e.beforeBirthSequence(), seq - 1);
                if (expiry != RangeMaxExpiry.NONE) {
                    b.add(UpdateKinds.RAISE_EXPIRY, e.beforePbn(), expiry);
                }
            }
        }
        return b;
    }

    private static UpdateBatch each(long[] pbns, int kind, long value) {
        UpdateBatch b = new UpdateBatch(pbns.length);
        for (long p : pbns) {
            if (p < 0) {
                throw new IllegalArgumentException("negative PBN " + p);
            }
            if (p != 0) {
                b.add(kind, p, value);
            }
        }
        return b;
    }
}
