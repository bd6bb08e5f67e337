package org.holdfast.common.protocol;

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
}
