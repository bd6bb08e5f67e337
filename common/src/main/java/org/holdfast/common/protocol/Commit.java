package org.holdfast.common.protocol;

/** COMMIT (0x16), agent to server: every NEED is answered; make the snapshot durable. */
public record Commit(long volumeBytes) implements Message {
    @Override
    public MessageType type() {
        return MessageType.COMMIT;
    }
}
