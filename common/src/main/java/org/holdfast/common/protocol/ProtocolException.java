package org.holdfast.common.protocol;

import io.netty.handler.codec.CorruptedFrameException;

/**
 * A protocol violation: the peer must be sent {@code ERROR} with {@link #code()} and disconnected.
 *
 * <p>It extends Netty's {@link CorruptedFrameException} (a {@code DecoderException}) so that
 * {@code ByteToMessageDecoder} passes it to {@code exceptionCaught} unwrapped.
 */
public class ProtocolException extends CorruptedFrameException {
    private final ErrorCode code;

    public ProtocolException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public ProtocolException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** The code to put in the {@code ERROR} frame sent to the peer. */
    public ErrorCode code() {
        return code;
    }

    @Override
    public String getMessage() {
        return code + ": " + super.getMessage();
    }
}
