package org.holdfast.gc.bosc;

import java.util.Arrays;

/**
 * A growable list of log records in primitive arrays (no object per update). Producers fill one
 * with GMA updates; the log assigns consecutive LSNs starting at {@link #firstLsn()} when it takes
 * the batch. Kinds are {@link org.holdfast.gc.gma.GmaChunk.UpdateKinds} plus the two group markers.
 */
public final class UpdateBatch {
    /** Opens a group: pbn field = operation id, value = number of updates in the group. */
    public static final int GROUP_BEGIN = 10;
    /** Closes a group; only a group whose END is in the log is ever applied. */
    public static final int GROUP_END = 11;

    private byte[] kind;
    private long[] pbn;
    private long[] value;
    private int size;
    private long firstLsn;

    public UpdateBatch() {
        this(64);
    }

    public UpdateBatch(int capacity) {
        int c = Math.max(4, capacity);
        kind = new byte[c];
        pbn = new long[c];
        value = new long[c];
    }

    public void add(int k, long p, long v) {
        if (size == kind.length) {
            grow(size + 1);
        }
        kind[size] = (byte) k;
        pbn[size] = p;
        value[size] = v;
        size++;
    }

    private void grow(int needed) {
        int c = Math.max(needed, kind.length * 2);
        kind = Arrays.copyOf(kind, c);
        pbn = Arrays.copyOf(pbn, c);
        value = Arrays.copyOf(value, c);
    }

    /** Appends all of {@code other}'s records. */
    public void addAll(UpdateBatch other) {
        if (size + other.size > kind.length) {
            grow(size + other.size);
        }
        System.arraycopy(other.kind, 0, kind, size, other.size);
        System.arraycopy(other.pbn, 0, pbn, size, other.size);
        System.arraycopy(other.value, 0, value, size, other.size);
        size += other.size;
    }

    public int size() {
        return size;
    }

    public int kind(int i) {
        return kind[i];
    }

    public long pbn(int i) {
        return pbn[i];
    }

    public long value(int i) {
        return value[i];
    }

    public long firstLsn() {
        return firstLsn;
    }

    void firstLsn(long lsn) {
        firstLsn = lsn;
    }

    public long lsn(int i) {
        return firstLsn + i;
    }

    /** Number of GMA updates (group markers excluded). */
    public int updateCount() {
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (kind[i] < GROUP_BEGIN) {
                n++;
            }
        }
        return n;
    }

    public void clear() {
        size = 0;
        firstLsn = 0;
    }
}
