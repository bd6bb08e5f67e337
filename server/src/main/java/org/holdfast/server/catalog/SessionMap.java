package org.holdfast.server.catalog;

import java.util.Arrays;

/**
 * The LBN → PBN entries one backup session asks its snapshot to have, in strictly increasing LBN
 * order. Only LBNs the session saw are in it; {@link SnapshotCommit} compares them with the
 * parent and writes only those that changed. Growable parallel arrays, no per-entry objects.
 */
public final class SessionMap {
    private long[] lbn;
    private long[] pbn;
    private int size;

    public SessionMap(int initialCapacity) {
        int c = Math.max(16, initialCapacity);
        lbn = new long[c];
        pbn = new long[c];
    }

    /** Appends an entry; {@code lbn} must exceed the previous one. */
    public void add(long lbn, long pbn) {
        if (size > 0 && lbn <= this.lbn[size - 1]) {
            throw new IllegalArgumentException("session LBNs must increase: " + lbn + " after " + this.lbn[size - 1]);
        }
        if (pbn < 0) {
            throw new IllegalArgumentException("negative PBN " + pbn);
        }
        if (size == this.lbn.length) {
            this.lbn = Arrays.copyOf(this.lbn, size * 2);
            this.pbn = Arrays.copyOf(this.pbn, size * 2);
        }
        this.lbn[size] = lbn;
        this.pbn[size] = pbn;
        size++;
    }

    public int size() {
        return size;
    }

    public long lbn(int i) {
        return lbn[i];
    }

    public long pbn(int i) {
        return pbn[i];
    }
}
