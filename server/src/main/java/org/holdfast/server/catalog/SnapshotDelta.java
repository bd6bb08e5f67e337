package org.holdfast.server.catalog;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import org.holdfast.common.model.DeltaEntry;

/**
 * The delta of one snapshot, packed in parallel arrays in LBN order: entry i moved LBN
 * {@link #lbn(int)} from {@link #beforePbn(int)} (mapped since {@link #beforeBirthSequence(int)}, 0
 * if never mapped) to {@link #newPbn(int)}. Read it with the indexed accessors on hot paths, or as
 * {@link #asList()} of {@link DeltaEntry} where convenience matters more than allocation.
 */
public final class SnapshotDelta {
    private long[] lbn;
    private long[] before;
    private long[] birth;
    private long[] after;
    private int size;

    public SnapshotDelta(int initialCapacity) {
        int c = Math.max(16, initialCapacity);
        lbn = new long[c];
        before = new long[c];
        birth = new long[c];
        after = new long[c];
    }

    /** Appends an entry; LBNs must come in increasing order. */
    public void add(long lbn, long beforePbn, long beforeBirthSequence, long newPbn) {
        if (size > 0 && lbn <= this.lbn[size - 1]) {
            throw new IllegalArgumentException("delta LBNs must increase: " + lbn + " after " + this.lbn[size - 1]);
        }
        if (size == this.lbn.length) {
            int c = size * 2;
            this.lbn = Arrays.copyOf(this.lbn, c);
            before = Arrays.copyOf(before, c);
            birth = Arrays.copyOf(birth, c);
            after = Arrays.copyOf(after, c);
        }
        this.lbn[size] = lbn;
        before[size] = beforePbn;
        birth[size] = beforeBirthSequence;
        after[size] = newPbn;
        size++;
    }

    public int size() {
        return size;
    }

    public long lbn(int i) {
        return lbn[check(i)];
    }

    public long beforePbn(int i) {
        return before[check(i)];
    }

    public long beforeBirthSequence(int i) {
        return birth[check(i)];
    }

    public long newPbn(int i) {
        return after[check(i)];
    }

    public DeltaEntry entry(int i) {
        check(i);
        return new DeltaEntry(lbn[i], before[i], birth[i], after[i]);
    }

    /** A read-only list view that creates each {@link DeltaEntry} on access. */
    public List<DeltaEntry> asList() {
        return new AbstractList<>() {
            @Override
            public DeltaEntry get(int index) {
                return entry(index);
            }

            @Override
            public int size() {
                return size;
            }
        };
    }

    private int check(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException(i);
        }
        return i;
    }
}
