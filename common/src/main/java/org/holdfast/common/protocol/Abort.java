package org.holdfast.common.protocol;

/** ABORT (0x18), agent to server: drop the session; no snapshot is made. Empty body. */
public record Abort() implements Message {
    /** The one instance anyone needs. */
    public static final Abort INSTANCE = new Abort();

    @Override
    public MessageType type() {
        return MessageType.ABORT;
    }
}
