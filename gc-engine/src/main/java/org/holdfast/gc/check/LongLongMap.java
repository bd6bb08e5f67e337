package org.holdfast.gc.check;

import java.util.Arrays;

/** An open-addressing map from positive long keys to long values, for fsck's counts (no boxing). */
final class LongLongMap {
    private long[] keys = new long[1 << 10];
    private long[] vals = new long[1 << 10];
    private int size;

    private int index(long k) {
        int mask = keys.length - 1;
        int i = (int) (mix(k) & mask);
        while (keys[i] != 0 && keys[i] != k) {
            i = (i + 1) & mask;
        }
        return i;
    }

    private static long mix(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 32);
    }

    boolean contains(long k) {
        return keys[index(k)] == k;
    }

    long get(long k, long dflt) {
        int i = index(k);
        return keys[i] == k ? vals[i] : dflt;
    }

    void add(long k, long delta) {
        int i = index(k);
        if (keys[i] == k) {
            vals[i] += delta;
        } else {
            insert(i, k, delta);
        }
    }

    void max(long k, long v) {
        int i = index(k);
        if (keys[i] == k) {
            vals[i] = Math.max(vals[i], v);
        } else {
            insert(i, k, v);
        }
    }

    private void insert(int i, long k, long v) {
        if (k <= 0) {
            throw new IllegalArgumentException("key must be positive: " + k);
        }
        keys[i] = k;
        vals[i] = v;
        if (++size * 2 > keys.length) {
            long[] ok = keys;
            long[] ov = vals;
            keys = new long[ok.length * 2];
            vals = new long[ok.length * 2];
            size = 0;
            for (int j = 0; j < ok.length; j++) {
                if (ok[j] != 0) {
                    int n = index(ok[j]);
                    keys[n] = ok[j];
                    vals[n] = ov[j];
                    size++;
                }
            }
        }
    }

    /** Keys in ascending order. */
    long[] sortedKeys() {
        long[] out = new long[size];
        int n = 0;
        for (long k : keys) {
            if (k != 0) {
                out[n++] = k;
            }
        }
        Arrays.sort(out);
        return out;
    }

    int size() {
        return size;
    }
}
