package org.holdfast.bench.workload;

/** A run of consecutive blocks of a volume: {@code [start, start + length)}. */
public record Extent(long start, long length) {
    /** Checks the run is non-empty and starts at a valid block. */
    public Extent {
        if (start < 0 || length <= 0) {
            throw new IllegalArgumentException("bad extent " + start + "+" + length);
        }
    }

    /** First block after the run. */
    public long end() {
        return start + length;
    }
}
