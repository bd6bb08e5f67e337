package org.holdfast.common.protocol;

/** DEDUP_FAILED (0x4A), worker to master: request {@code requestId} failed on the worker, with why (the master fails that call). */
public record DedupFailed(long requestId, String message) implements Message {
    public DedupFailed {
        WireStrings.check("message", message, ProtocolLimits.MAX_ERROR_MESSAGE);
    }

    /** A failure whose message is cut to fit the frame. */
    public static DedupFailed of(long requestId, String message) {
        return new DedupFailed(requestId, WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_FAILED;
    }
}
