package org.holdfast.common.protocol;

/** DATA_FAILED (0x53), worker to master: data request {@code requestId} was refused or failed on the worker, with why; nothing of it was stored. */
public record DataFailed(long requestId, String message) implements Message {
    public DataFailed {
        WireStrings.check("message", message, ProtocolLimits.MAX_ERROR_MESSAGE);
    }

    /** A failure whose message is cut to fit the frame. */
    public static DataFailed of(long requestId, String message) {
        return new DataFailed(requestId, WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    @Override
    public MessageType type() {
        return MessageType.DATA_FAILED;
    }
}
