package org.holdfast.gc.sweep;

/**
 * A set of PBNs as a bitmap: one bit per PBN up to the highest one added, in pages allocated on
 * first use. PBNs are allocated densely in increasing order, so a bitmap (1 GiB of PBNs, 4 TiB of
 * 4 KiB blocks, in 128 MiB) is smaller than any hash set once more than a few percent of the PBNs
 * are live, and lookups cost no hashing. Not thread-safe: callers that share one synchronise.
 */
public final class LivePbns {
    private static final int PAGE_SHIFT = 16; // longs per page: 2^16 (512 KiB, 4 Mi PBNs)
    private static final int PAGE_LONGS = 1 << PAGE_SHIFT;

    private long[][] pages = new long[0][];
    private long count;

    /** Adds {@code pbn} (0, the zero block, is ignored); true if it was not in the set. */
    public boolean add(long pbn) {
        if (pbn <= 0) {
            return false;
        }
        long word = pbn >>> 6;
        int page = (int) (word >>> PAGE_SHIFT);
        if (page >= pages.length) {
            pages = java.util.Arrays.copyOf(pages, Math.max(page + 1, pages.length * 2));
        }
        long[] p = pages[page];
        if (p == null) {
            p = new long[PAGE_LONGS];
            pages[page] = p;
        }
        int i = (int) (word & (PAGE_LONGS - 1));
        long bit = 1L << (pbn & 63);
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

    /** Adds every PBN of {@code other} (a page at a time). */
    public void addAll(LivePbns other) {
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
        if (pbn <= 0) {
            return false;
        }
        long word = pbn >>> 6;
        long page = word >>> PAGE_SHIFT;
        if (page >= pages.length || pages[(int) page] == null) {
            return false;
        }
        return (pages[(int) page][(int) (word & (PAGE_LONGS - 1))] & (1L << (pbn & 63))) != 0;
    }

    /** Distinct PBNs in the set. */
    public long count() {
        return count;
    }
}
