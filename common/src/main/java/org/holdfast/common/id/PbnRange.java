package org.holdfast.common.id;

/**
 * The PBNs {@code [first, limit)} one store allocates from (a worker's range in master/worker mode;
 * {@link #STANDALONE} otherwise); the ranges of two workers never overlap. PBN 0 means "no block"
 * and lies in no range.
 */
public record PbnRange(long first, long limit) {
    /** The range of a standalone server's store: every PBN from 1 on, as before ranges existed. */
    public static final PbnRange STANDALONE = new PbnRange(1, Long.MAX_VALUE);

    public PbnRange {
        if (first < 1 || limit <= first) {
            throw new IllegalArgumentException("a PBN range needs 1 <= first < limit (PBN 0 means no block), got ["
                    + first + ", " + limit + ")");
        }
    }

    /** True if the two ranges share a PBN. */
    public boolean overlaps(PbnRange other) {
        return first < other.limit && other.first < limit;
    }

    /** True if {@code pbn} lies in the range. */
    public boolean contains(long pbn) {
        return pbn >= first && pbn < limit;
    }

    /** Number of PBNs in the range. */
    public long size() {
        return limit - first;
    }

    /** The range as people read it, {@code [first, limit)}. */
    @Override
    public String toString() {
        return "[" + first + ", " + limit + ")";
    }
}
