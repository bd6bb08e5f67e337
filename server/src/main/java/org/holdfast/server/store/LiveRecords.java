package org.holdfast.server.store;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/** The live records of one data log that a compaction copies: PBN, old and new offset, stored length, fingerprint. */
final class LiveRecords {
    private int size;
    private long[] pbn = new long[256];
    private long[] offset = new long[256];
    private long[] newOffset = new long[256];
    private int[] length = new int[256];
    private int[] newLength = new int[256];
    private byte[] fps = new byte[256 * Fingerprint.BYTES];

    void add(long p, long off, int len, byte[] fp, int fpOff) {
        if (size == pbn.length) {
            int n = size * 2;
            pbn = Arrays.copyOf(pbn, n);
            offset = Arrays.copyOf(offset, n);
            newOffset = Arrays.copyOf(newOffset, n);
            length = Arrays.copyOf(length, n);
            newLength = Arrays.copyOf(newLength, n);
            fps = Arrays.copyOf(fps, n * Fingerprint.BYTES);
        }
        pbn[size] = p;
        offset[size] = off;
        length[size] = len;
        newLength[size] = len;
        System.arraycopy(fp, fpOff, fps, size * Fingerprint.BYTES, Fingerprint.BYTES);
        size++;
    }

    int size() {
        return size;
    }

    long pbn(int i) {
        return pbn[i];
    }

    long offset(int i) {
        return offset[i];
    }

    long newOffset(int i) {
        return newOffset[i];
    }

    void setNewOffset(int i, long off) {
        newOffset[i] = off;
    }

    /** The location's length field as found (a frame member's {@link FrameFormat#memberLocation}). */
    int length(int i) {
        return length[i];
    }

    /** The length field the new location gets (a repacked frame's members get the new frame's). */
    int newLength(int i) {
        return newLength[i];
    }

    void setNewLength(int i, int len) {
        newLength[i] = len;
    }

    /** Fingerprints, 32 bytes each at i * 32. */
    byte[] fps() {
        return fps;
    }

    /** Bytes the records take in a log, headers included (a frame member: its share of the frame). */
    long recordBytes() {
        long b = 0;
        for (int i = 0; i < size; i++) {
            b += recordShare(length[i]);
        }
        return b;
    }

    /** The log bytes, header included, one location accounts for: a frame member its share of the frame record. */
    static long recordShare(int location) {
        return (FormatVersions.RECORD_HEADER_BYTES + (long) FrameFormat.recordStored(location)) / FrameFormat.members(location);
    }
}
