package org.holdfast.client.scan;

/** All data, no holes: the fallback where holes cannot be asked for, and for {@code --read-holes}. */
final class WholeFileRegions implements DataRegions {
    private final long size;

    WholeFileRegions(long size) {
        this.size = size;
    }

    @Override
    public long nextData(long offset) {
        return offset < size ? Math.max(0, offset) : NO_MORE_DATA;
    }

    @Override
    public long nextHole(long offset) {
        return size;
    }

    @Override
    public boolean findsHoles() {
        return false;
    }

    @Override
    public void close() {
        // nothing held
    }
}
