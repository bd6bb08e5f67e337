package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DEDUP_ANSWER (0x45), worker to master: per looked-up entry the PBN the worker resolved it to (0 =
 * miss) and the run length from it, plus the worker's load ({@link DedupFrames#LOAD_FIELDS} values).
 */
public record DedupAnswer(long requestId, int count, long[] pbns, int[] runs, long[] load) implements Message {
    public DedupAnswer {
        DedupFrames.checkCount("DEDUP_ANSWER", count);
        DedupFrames.checkLength("pbns", pbns.length, count);
        DedupFrames.checkLength("runs", runs.length, count);
        DedupFrames.checkLength("load", load.length, DedupFrames.LOAD_FIELDS);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_ANSWER;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupAnswer x && x.requestId == requestId && x.count == count && Arrays.equals(x.pbns, pbns)
                && Arrays.equals(x.runs, runs) && Arrays.equals(x.load, load);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(pbns);
    }

    @Override
    public String toString() {
        return "DedupAnswer[requestId=" + requestId + ", count=" + count + "]";
    }
}
