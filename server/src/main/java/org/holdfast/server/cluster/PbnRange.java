package org.holdfast.server.cluster;

/** The PBNs {@code [first, limit)} one worker allocates from; the ranges of two workers never overlap. */
public record PbnRange(long first, long limit) {
    public PbnRange {
        if (first < 0 || limit <= first) {
            throw new IllegalArgumentException("a PBN range needs 0 <= first < limit, got [" + first + ", " + limit + ")");
        }
    }

    /** True if the two ranges share a PBN. */
    public boolean overlaps(PbnRange other) {
        return first < other.limit && other.first < limit;
    }

    /** Number of PBNs in the range. */
    public long size() {
        return limit - first;
    }
}
