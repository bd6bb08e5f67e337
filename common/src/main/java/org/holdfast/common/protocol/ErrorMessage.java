package org.holdfast.common.protocol;

/** ERROR (0x03), either direction: the sender gives up on the connection and closes it after this. */
public record ErrorMessage(ErrorCode code, String message) implements Message {
    public ErrorMessage {
        if (code == null) {
            throw new IllegalArgumentException("code must not be null");
        }
        WireStrings.check("message", message, ProtocolLimits.MAX_ERROR_MESSAGE);
    }

    /** An ERROR whose message is cut to fit {@link ProtocolLimits#MAX_ERROR_MESSAGE}; never throws on length. */
    public static ErrorMessage of(ErrorCode code, String message) {
        return new ErrorMessage(code, WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    /** The ERROR that answers a protocol violation. */
    public static ErrorMessage of(ProtocolException e) {
        return of(e.code(), e.getMessage());
    }

    @Override
    public MessageType type() {
        return MessageType.ERROR;
    }
}
