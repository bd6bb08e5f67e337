package org.holdfast.gc.sweep;

/**
 * A set of PBNs as a bitmap: one bit per PBN from the first PBN of its range up to the highest one
 * added, in pages allocated on first use. PBNs are allocated densely in increasing order, so a
 * bitmap (1 GiB of PBNs, 4 TiB of 4 KiB blocks, in 128 MiB) is smaller than any hash set once more
 * than a few percent of the PBNs are live, and lookups cost no hashing. Pages count from the range's
 * first PBN, not from PBN 0, so a set over a worker's range at 2^48 holds a page pointer per 4 Mi
 * PBNs of its own blocks, not 2^48 / 4 Mi of them. Not thread-safe: callers that share one
 * synchronise.
 */
public final class LivePbns {
    private static final int PAGE_SHIFT = 16; // longs per page: 2^16 (512 KiB, 4 Mi PBNs)
    private static final int PAGE_LONGS = 1 << PAGE_SHIFT;

    private final long first;
    private long[][] pages = new long[0][];
    private long count;

    /** A set of a standalone server's PBNs (from PBN 1). */
    public LivePbns() {
        this(1);
    }

    /**
     * A set of PBNs from {@code first} (the first PBN of the store's range, {@code PbnRange.first()};
     * at least 1: PBN 0 is no block).
     */
    public LivePbns(long first) {
        if (first < 1) {
            throw new IllegalArgumentException("a PBN set starts at PBN 1 or later (PBN 0 is no block), not at " + first);
        }
        this.first = first;
    }

    /** The first PBN this set may hold. */
    public long first() {
        return first;
    }

    /**
     * Adds {@code pbn} (0, the zero block, is ignored); true if it was not in the set.
     *
     * @throws IllegalArgumentException a PBN below {@link #first()}: another range's, so the mark of this range is wrong
     */
    public boolean add(long pbn) {
        if (pbn <= 0) {
            return false;
        }
        if (pbn < first) {
            // dropping it could let a sweep of this range free a block it wrongly thinks unmarked: fail the mark instead
            throw new IllegalArgumentException("PBN " + pbn + " lies below the first PBN " + first + " of this set's range: it belongs to"
                    + " another node's range; nothing was marked for it");
        }
        long offset = pbn - first;
        long word = offset >>> 6;
        int page = Math.toIntExact(word >>> PAGE_SHIFT);
        if (page >= pages.length) {
            pages = java.util.Arrays.copyOf(pages, Math.max(page + 1, pages.length * 2));
        }
        long[] p = pages[page];
        if (p == null) {
            p = new long[PAGE_LONGS];
            pages[page] = p;
        }
        int i = (int) (word & (PAGE_LONGS - 1));
        long bit = 1L << (offset & 63);
        if ((p[i] & bit) != 0) {
            return false;
        }
        p[i] |= bit;
        count++;
        return true;
    }

    /** Adds every non-zero PBN of {@code pbns[off..off+n)}. */
    public void addAll(long[] pbns, int off, int n) {
        for (int i = off; i < off + n; i++) {
            add(pbns[i]);
        }
    }

    /** Adds every PBN of {@code other} (a page at a time), a set over the same range. */
    public void addAll(LivePbns other) {
        if (other.first != first) {
            throw new IllegalArgumentException("cannot join a PBN set from " + other.first + " into one from " + first
                    + ": they cover different ranges");
        }
        if (other.pages.length > pages.length) {
            pages = java.util.Arrays.copyOf(pages, other.pages.length);
        }
        for (int page = 0; page < other.pages.length; page++) {
            long[] src = other.pages[page];
            if (src == null) {
                continue;
            }
            if (pages[page] == null) {
                pages[page] = src.clone();
                for (long w : src) {
                    count += Long.bitCount(w);
                }
                continue;
            }
            long[] dst = pages[page];
            for (int i = 0; i < PAGE_LONGS; i++) {
                count += Long.bitCount(src[i] & ~dst[i]);
                dst[i] |= src[i];
            }
        }
    }

    /** True if {@code pbn} was added. */
    public boolean contains(long pbn) {
        if (pbn < first) {
            return false;
        }
        long offset = pbn - first;
        long word = offset >>> 6;
        long page = word >>> PAGE_SHIFT;
        if (page >= pages.length || pages[(int) page] == null) {
            return false;
        }
        return (pages[(int) page][(int) (word & (PAGE_LONGS - 1))] & (1L << (offset & 63))) != 0;
    }

    /** Distinct PBNs in the set. */
    public long count() {
        return count;
    }

    /** Page pointers allocated (tests: the set's size follows its range's blocks, not their PBN values). */
    int pageSlots() {
        return pages.length;
    }
}
