package org.holdfast.common.protocol;

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
}
