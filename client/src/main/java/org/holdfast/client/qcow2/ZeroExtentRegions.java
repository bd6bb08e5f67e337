package org.holdfast.client.qcow2;

import java.util.Arrays;
import java.util.List;
import org.holdfast.client.scan.DataRegions;

/**
 * Holes of a qcow2 image as its NBD server reports them ({@code base:allocation}: ranges that read
 * as zeros, unallocated or zero clusters), so a full read skips them as a sparse file's are.
 */
final class ZeroExtentRegions implements DataRegions {
    private final long size;
    private final long[] dataStarts;
    private final long[] dataEnds;

    private ZeroExtentRegions(long size, long[] dataStarts, long[] dataEnds) {
        this.size = size;
        this.dataStarts = dataStarts;
        this.dataEnds = dataEnds;
    }

    /** From the data ranges {@code {offset, length}} in increasing order; everything else reads as zeros. */
    static ZeroExtentRegions of(long size, List<long[]> data) {
        long[] s = new long[data.size()];
        long[] e = new long[data.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = data.get(i)[0];
            e[i] = data.get(i)[0] + data.get(i)[1];
        }
        return new ZeroExtentRegions(size, s, e);
    }

    /** Index of the first data range ending after {@code offset}. */
    private int rangeAfter(long offset) {
        int i = Arrays.binarySearch(dataEnds, offset);
        return i >= 0 ? i + 1 : -i - 1;
    }

    @Override
    public long nextData(long offset) {
        if (offset >= size) {
            return NO_MORE_DATA;
        }
        int i = rangeAfter(offset);
        return i < dataStarts.length ? Math.max(offset, dataStarts[i]) : NO_MORE_DATA;
    }

    @Override
    public long nextHole(long offset) {
        int i = rangeAfter(offset);
        if (i < dataStarts.length && dataStarts[i] <= offset) {
            return Math.min(size, dataEnds[i]);
        }
        return Math.min(size, offset);
    }

    @Override
    public boolean findsHoles() {
        return true;
    }

    @Override
    public void close() {
        // nothing held
    }
}
