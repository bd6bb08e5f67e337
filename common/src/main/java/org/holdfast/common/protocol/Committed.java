package org.holdfast.common.protocol;

/** COMMITTED (0x17), server to agent: the snapshot is durable; its sequence and the session's counts. */
public record Committed(long sequence, long createdAtMillis, long logicalBytes, long changedBlocks, long sentBlocks,
                        long newBlocks, long storedBytes) implements Message {
    @Override
    public MessageType type() {
        return MessageType.COMMITTED;
    }
}
