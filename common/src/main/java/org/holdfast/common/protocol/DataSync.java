package org.holdfast.common.protocol;

/** DATA_SYNC (0x4F), master to worker: make every block stored so far durable; answered by DATA_SYNCED or DATA_FAILED. */
public record DataSync(long requestId) implements Message {
    @Override
    public MessageType type() {
        return MessageType.DATA_SYNC;
    }
}
