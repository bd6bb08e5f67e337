package org.holdfast.server.store;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/**
 * Locations of records appended since the last sync and not yet in the {@link LocationIndex}: per
 * entry a PBN, its log, offset, location word and fingerprint, in parallel arrays that only grow,
 * so an append allocates nothing. Not thread-safe: {@link DataStore} guards it with its append lock.
 */
final class UnindexedLocations {
    private final boolean consecutive;
    private int count;
    private long[] pbn;
    private int[] logId;
    private long[] offset;
    private int[] location;
    private byte[] fingerprints;
    // putTo's key and value: the batch copies them, so one pair serves every entry
    private final byte[] key = new byte[8];
    private final byte[] value = new byte[LocationIndex.VALUE_BYTES];

    /**
     * A table of {@code capacity} entries to start with; {@code consecutive}: every PBN added is the
     * one after the previous entry's (the store's appends), which makes {@link #indexOf} a subtraction.
     */
    UnindexedLocations(int capacity, boolean consecutive) {
        this.consecutive = consecutive;
        pbn = new long[capacity];
        logId = new int[capacity];
        offset = new long[capacity];
        location = new int[capacity];
        fingerprints = new byte[capacity * Fingerprint.BYTES];
    }

    void add(long p, int log, long at, int loc, byte[] fps, int fpOff) {
        if (consecutive && count > 0 && p != pbn[count - 1] + 1) {
            throw new IllegalStateException("PBN " + p + " does not follow " + pbn[count - 1]);
        }
        if (count == pbn.length) {
            int n = count * 2;
            pbn = Arrays.copyOf(pbn, n);
            logId = Arrays.copyOf(logId, n);
            offset = Arrays.copyOf(offset, n);
            location = Arrays.copyOf(location, n);
            fingerprints = Arrays.copyOf(fingerprints, n * Fingerprint.BYTES);
        }
        int i = count++;
        pbn[i] = p;
        logId[i] = log;
        offset[i] = at;
        location[i] = loc;
        System.arraycopy(fps, fpOff, fingerprints, i * Fingerprint.BYTES, Fingerprint.BYTES);
    }

    /** The entry of PBN {@code p}, or -1; for a consecutive table only. */
    int indexOf(long p) {
        if (!consecutive) {
            throw new IllegalStateException("indexOf needs a table of consecutive PBNs");
        }
        if (count == 0) {
            return -1;
        }
        long i = p - pbn[0];
        return i >= 0 && i < count ? (int) i : -1;
    }

    int size() {
        return count;
    }

    long pbn(int i) {
        return pbn[i];
    }

    int logId(int i) {
        return logId[i];
    }

    long offset(int i) {
        return offset[i];
    }

    int location(int i) {
        return location[i];
    }

    /** The fingerprints, entry i at {@code i * 32}; read-only for callers. */
    byte[] fingerprints() {
        return fingerprints;
    }

    /** Copies entry i's fingerprint to {@code dst[dstOff..+32)}. */
    void copyFingerprint(int i, byte[] dst, int dstOff) {
        System.arraycopy(fingerprints, i * Fingerprint.BYTES, dst, dstOff, Fingerprint.BYTES);
    }

    /** Adds entry i to {@code batch}'s location index writes. */
    void putTo(LocationIndex locations, MetadataBatch batch, int i) {
        locations.put(batch, pbn[i], logId[i], offset[i], location[i], fingerprints, i * Fingerprint.BYTES, key, value);
    }

    /** Drops the first {@code n} entries (indexed by a sync); entries added since then stay. */
    void dropFirst(int n) {
        int rest = count - n;
        System.arraycopy(pbn, n, pbn, 0, rest);
        System.arraycopy(logId, n, logId, 0, rest);
        System.arraycopy(offset, n, offset, 0, rest);
        System.arraycopy(location, n, location, 0, rest);
        System.arraycopy(fingerprints, n * Fingerprint.BYTES, fingerprints, 0, rest * Fingerprint.BYTES);
        count = rest;
    }

    void clear() {
        count = 0;
    }
}
