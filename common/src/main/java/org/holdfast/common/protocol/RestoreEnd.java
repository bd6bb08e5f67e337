package org.holdfast.common.protocol;

/** RESTORE_END (0x25), server to agent: the stream is complete; {@code blocksSent} counts every block sent, zero blocks included. */
public record RestoreEnd(long blocksSent) implements Message {
    @Override
    public MessageType type() {
        return MessageType.RESTORE_END;
    }
}
