package org.holdfast.common.protocol;

/** RESTORE_INFO (0x23), server to agent: the shape of the snapshot about to be streamed. */
public record RestoreInfo(long sequence, long volumeBytes, int blockSize, long blockCount) implements Message {
    @Override
    public MessageType type() {
        return MessageType.RESTORE_INFO;
    }
}
