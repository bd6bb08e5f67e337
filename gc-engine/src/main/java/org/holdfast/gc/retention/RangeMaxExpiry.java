package org.holdfast.gc.retention;

import java.util.Arrays;

/**
 * The expiries of one volume's snapshots by sequence, answering "latest expiry among the
 * snapshots with sequence in [from, to]" in O(log n) (correction 2: a dereferenced map entry was
 * seen by exactly the snapshots from its birth to the one before the committing snapshot).
 *
 * <p>An iterative segment tree over the snapshots in sequence order; appends are amortised O(log n),
 * a changed expiry (retention extended) is O(log n), and a deleted snapshot is set to
 * {@link Long#MIN_VALUE} so it no longer keeps blocks alive. Not thread-safe: one per volume, used
 * under the volume's commit lock.
 */
public final class RangeMaxExpiry {
    /** Returned for a range with no retained snapshot. */
    public static final long NONE = Long.MIN_VALUE;

    private long[] seqs = new long[16];
    private long[] tree = new long[32];
    private int size;
    private int cap = 16;

    public RangeMaxExpiry() {
        Arrays.fill(tree, NONE);
    }

    /** Adds the newest snapshot; sequences must increase. */
    public void append(long sequence, long expiry) {
        if (size > 0 && sequence <= seqs[size - 1]) {
            throw new IllegalArgumentException("sequence " + sequence + " not after " + seqs[size - 1]);
        }
        if (size == cap) {
            grow();
        }
        seqs[size] = sequence;
        set(size, expiry);
        size++;
    }

    private void grow() {
        int ncap = cap * 2;
        long[] ntree = new long[2 * ncap];
        Arrays.fill(ntree, NONE);
        System.arraycopy(tree, cap, ntree, ncap, cap);
        for (int i = ncap - 1; i >= 1; i--) {
            ntree[i] = Math.max(ntree[2 * i], ntree[2 * i + 1]);
        }
        seqs = Arrays.copyOf(seqs, ncap);
        tree = ntree;
        cap = ncap;
    }

    private void set(int pos, long expiry) {
        int i = pos + cap;
        tree[i] = expiry;
        for (i >>= 1; i >= 1; i >>= 1) {
            tree[i] = Math.max(tree[2 * i], tree[2 * i + 1]);
        }
    }

    /** Changes the expiry of snapshot {@code sequence} (extension, or NONE once deleted). */
    public void setExpiry(long sequence, long expiry) {
        int pos = Arrays.binarySearch(seqs, 0, size, sequence);
        if (pos < 0) {
            throw new IllegalArgumentException("no snapshot with sequence " + sequence);
        }
        set(pos, expiry);
    }

    /** Marks snapshot {@code sequence} deleted. */
    public void remove(long sequence) {
        setExpiry(sequence, NONE);
    }

    /** The expiry of one snapshot, or NONE. */
    public long expiryOf(long sequence) {
        int pos = Arrays.binarySearch(seqs, 0, size, sequence);
        return pos < 0 ? NONE : tree[pos + cap];
    }

    /** Latest expiry among snapshots with sequence in [from, to], or {@link #NONE}. */
    public long max(long from, long to) {
        if (from > to || size == 0) {
            return NONE;
        }
        int lo = lowerBound(from);
        int hi = lowerBound(to + 1) - 1;
        if (lo > hi) {
            return NONE;
        }
        long r = NONE;
        int l = lo + cap;
        int h = hi + cap + 1;
        while (l < h) {
            if ((l & 1) == 1) {
                r = Math.max(r, tree[l++]);
            }
            if ((h & 1) == 1) {
                r = Math.max(r, tree[--h]);
            }
            l >>= 1;
            h >>= 1;
        }
        return r;
    }

    private int lowerBound(long seq) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (seqs[mid] < seq) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    public int size() {
        return size;
    }

    /** Newest sequence, or 0 if empty. */
    public long lastSequence() {
        return size == 0 ? 0 : seqs[size - 1];
    }
}
