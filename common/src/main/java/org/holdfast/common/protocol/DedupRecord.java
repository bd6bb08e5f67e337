package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DEDUP_RECORD (0x46), master to worker: the outcome of a looked-up segment, per entry its
 * fingerprint, final PBN (0 = held by another worker) and whether the session stored it new;
 * {@code placed} of the entries were routed to this worker to be stored. Answered by DEDUP_DONE.
 */
public record DedupRecord(long requestId, long stream, int count, int placed, byte[] fps, long[] pbns, boolean[] isNew)
        implements Message {
    public DedupRecord {
        DedupFrames.checkCount("DEDUP_RECORD", count);
        if (placed < 0 || placed > count) {
            throw new IllegalArgumentException("DEDUP_RECORD placed " + placed + " is not within 0.." + count);
        }
        DedupFrames.checkLength("fps", fps.length, count * 32L);
        DedupFrames.checkLength("pbns", pbns.length, count);
        DedupFrames.checkLength("isNew", isNew.length, count);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_RECORD;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupRecord x && x.requestId == requestId && x.stream == stream && x.count == count
                && x.placed == placed && Arrays.equals(x.fps, fps) && Arrays.equals(x.pbns, pbns) && Arrays.equals(x.isNew, isNew);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "DedupRecord[requestId=" + requestId + ", stream=" + stream + ", count=" + count + ", placed=" + placed + "]";
    }
}
