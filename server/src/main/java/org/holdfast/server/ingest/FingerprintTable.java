package org.holdfast.server.ingest;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/**
 * Open-addressing map from a fingerprint to an int (the index of the session entry that owns it),
 * keyed by the fingerprint bytes kept in the caller's packed array: no object per entry. The first
 * 8 bytes of a SHA-256 are already uniform, so they serve as the hash.
 */
final class FingerprintTable {
    private int[] slots;
    private int size;

    FingerprintTable(int expected) {
        int cap = Integer.highestOneBit(Math.max(16, expected * 2) - 1) << 1;
        slots = new int[cap];
        Arrays.fill(slots, -1);
    }

    /** The value stored for the fingerprint at {@code fps[off..off+32)}, or -1. {@code store} holds the keys. */
    int get(byte[] fps, int off, byte[] store) {
        int mask = slots.length - 1;
        for (int i = (int) Fingerprint.getLong(fps, off) & mask; ; i = (i + 1) & mask) {
            int v = slots[i];
            if (v < 0) {
                return -1;
            }
            if (Arrays.equals(store, v * Fingerprint.BYTES, v * Fingerprint.BYTES + Fingerprint.BYTES, fps, off, off + Fingerprint.BYTES)) {
                return v;
            }
        }
    }

    /** Maps the fingerprint stored at {@code store[value * 32]} to {@code value}; it must not be present. */
    void put(int value, byte[] store) {
        if ((size + 1) * 2 > slots.length) {
            grow(store);
        }
        insert(value, store);
        size++;
    }

    int size() {
        return size;
    }

    private void insert(int value, byte[] store) {
        int mask = slots.length - 1;
        int i = (int) Fingerprint.getLong(store, value * Fingerprint.BYTES) & mask;
        while (slots[i] >= 0) {
            i = (i + 1) & mask;
        }
        slots[i] = value;
    }

    private void grow(byte[] store) {
        int[] old = slots;
        slots = new int[old.length * 2];
        Arrays.fill(slots, -1);
        for (int v : old) {
            if (v >= 0) {
                insert(v, store);
            }
        }
    }
}
