package org.holdfast.common.protocol;

/**
 * DATA_SYNCED (0x50), worker to master: the durable point of DATA_SYNC {@code requestId}: every
 * block the worker answered DATA_STORED for below PBN {@code durableBelow} survives a crash.
 */
public record DataSynced(long requestId, long durableBelow) implements Message {
    public DataSynced {
        if (durableBelow < 1) {
            throw new IllegalArgumentException("DATA_SYNCED durableBelow must be at least 1, got " + durableBelow);
        }
    }

    @Override
    public MessageType type() {
        return MessageType.DATA_SYNCED;
    }
}
