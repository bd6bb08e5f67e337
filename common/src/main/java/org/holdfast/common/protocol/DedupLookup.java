package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * DEDUP_LOOKUP (0x44), master to worker: look up {@code count} fingerprints of one master stream,
 * packed 32 bytes each in {@code fps} (exactly {@code count * 32} bytes). Answered by DEDUP_ANSWER
 * or DEDUP_FAILED with the same {@code requestId}.
 */
public record DedupLookup(long requestId, long stream, int count, byte[] fps) implements Message {
    public DedupLookup {
        DedupFrames.checkCount("DEDUP_LOOKUP", count);
        DedupFrames.checkLength("fps", fps.length, count * 32L);
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_LOOKUP;
    }

    /** Arrays compare by content (a decoded message equals the one encoded). */
    @Override
    public boolean equals(Object o) {
        return o instanceof DedupLookup x && x.requestId == requestId && x.stream == stream && x.count == count
                && Arrays.equals(x.fps, fps);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(fps);
    }

    @Override
    public String toString() {
        return "DedupLookup[requestId=" + requestId + ", stream=" + stream + ", count=" + count + "]";
    }
}
