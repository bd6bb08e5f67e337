package org.holdfast.gc.bookkeeping;

import java.util.Arrays;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.UpdateBatch;

/**
 * Splits one GC operation's updates by PBN range (distributed GC, thesis 7.2.4): destination
 * {@code d} is the node that owns range {@code d} (the master's own range and each worker's), and
 * its share is the operation's updates of its PBNs, in the operation's order (so a share keeps the
 * increments before the decrements, as {@link GcBookkeeper} logs them).
 *
 * <p>Why two passes over the updates rather than one: an update of a PBN in no known range is an
 * error of the caller (a stale membership, a corrupt delta), and it must be refused before any
 * share is filled, so that nothing of the operation is sent or logged anywhere. The first pass only
 * looks the ranges up; the second copies into the caller's batches, which are cleared and reused
 * from one operation to the next, so routing allocates nothing per update. A lookup is a binary
 * search over the ranges sorted by first PBN (a handful of workers: a few comparisons).
 * Immutable, so one router serves any number of threads while the membership stays the same.
 */
public final class UpdateRouter {
    private final PbnRange[] ranges;
    /** Range firsts in ascending order, and the destination of each. */
    private final long[] firsts;
    private final long[] limits;
    private final int[] destination;

    /** Destinations {@code 0 .. ranges.size() - 1}, one per range; the ranges must not overlap. */
    public UpdateRouter(List<PbnRange> ranges) {
        this.ranges = ranges.toArray(new PbnRange[0]);
        Integer[] order = new Integer[this.ranges.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Long.compare(this.ranges[a].first(), this.ranges[b].first()));
        firsts = new long[order.length];
        limits = new long[order.length];
        destination = new int[order.length];
        for (int k = 0; k < order.length; k++) {
            PbnRange r = this.ranges[order[k]];
            if (k > 0 && limits[k - 1] > r.first()) {
                throw new IllegalArgumentException("PBN ranges " + this.ranges[destination[k - 1]] + " and " + r + " overlap: GC updates"
                        + " cannot be routed to one owner each; check the cluster membership");
            }
            firsts[k] = r.first();
            limits[k] = r.limit();
            destination[k] = order[k];
        }
    }

    /** Number of destinations. */
    public int destinations() {
        return ranges.length;
    }

    /** The range of destination {@code d}. */
    public PbnRange range(int d) {
        return ranges[d];
    }

    /** The destination whose range holds {@code pbn}, or -1. */
    public int destinationOf(long pbn) {
        int lo = 0;
        int hi = firsts.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (pbn < firsts[mid]) {
                hi = mid - 1;
            } else if (pbn >= limits[mid]) {
                lo = mid + 1;
            } else {
                return destination[mid];
            }
        }
        return -1;
    }

    /**
     * Clears {@code shares} (one per destination) and puts each update of operation {@code opId}
     * into the share of the range that holds its PBN, in order.
     *
     * @throws IllegalArgumentException an update of a PBN in no range (or a group marker): every share is left empty
     */
    public void route(long opId, UpdateBatch updates, UpdateBatch[] shares) {
        if (shares.length != ranges.length) {
            throw new IllegalArgumentException(shares.length + " shares for " + ranges.length + " destinations");
        }
        for (UpdateBatch s : shares) {
            s.clear();
        }
        for (int i = 0; i < updates.size(); i++) {
            if (updates.kind(i) >= UpdateBatch.GROUP_BEGIN) {
                throw new IllegalArgumentException("update " + i + " of GC operation " + opId + " is a group marker: route an"
                        + " operation's updates, not a logged group; nothing was routed");
            }
            if (destinationOf(updates.pbn(i)) < 0) {
                throw new IllegalArgumentException("update " + i + " of GC operation " + opId + " is for PBN " + updates.pbn(i)
                        + ", which lies in no known PBN range (the master's and its workers': " + Arrays.toString(ranges)
                        + "); nothing of the operation was routed, sent or logged: check the cluster membership and the catalog");
            }
        }
        for (int i = 0; i < updates.size(); i++) {
            shares[destinationOf(updates.pbn(i))].add(updates.kind(i), updates.pbn(i), updates.value(i));
        }
    }
}
