package org.holdfast.server.verify;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/** A set of PBNs, one bit each: PBNs are dense from 1, so a bitmap per 2^30 of them is compact for any store size. */
final class PbnSet {
    private static final int SHIFT = 30;
    private static final long MASK = (1L << SHIFT) - 1;
    private final Map<Long, BitSet> pages = new HashMap<>();
    private long size;

    /** Adds {@code pbn}; true if it was not in the set. */
    boolean add(long pbn) {
        BitSet page = pages.computeIfAbsent(pbn >>> SHIFT, k -> new BitSet());
        int bit = (int) (pbn & MASK);
        if (page.get(bit)) {
            return false;
        }
        page.set(bit);
        size++;
        return true;
    }

    /** True if {@code pbn} is in the set. */
    boolean contains(long pbn) {
        BitSet page = pages.get(pbn >>> SHIFT);
        return page != null && page.get((int) (pbn & MASK));
    }

    boolean isEmpty() {
        return size == 0;
    }

    long size() {
        return size;
    }
}
