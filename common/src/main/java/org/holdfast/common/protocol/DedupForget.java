package org.holdfast.common.protocol;

import java.util.Arrays;

/** DEDUP_FORGET (0x47), master to worker: freed PBNs and their fingerprints that no lookup may return again. Answered by DEDUP_DONE. */
public record DedupForget(long requestId, int count, long[] pbns, byte[] fps) implements Message {
    public DedupForget {
        DedupFrames.checkCount("DEDUP_FORGET", count);
        DedupFrames.checkLength("pbns", pbns.length, count);
        DedupFrames.checkLength("fps", fps.length, count * 32L);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_FORGET;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupForget x && x.requestId == requestId && x.count == count && Arrays.equals(x.pbns, pbns)
                && Arrays.equals(x.fps, fps);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "DedupForget[requestId=" + requestId + ", count=" + count + "]";
    }
}
