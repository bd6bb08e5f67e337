package org.holdfast.common.protocol;

/**
 * DATA_SYNCED (0x50), worker to master: the durable point of DATA_SYNC {@code requestId}: every
 * block the worker answered DATA_STORED for below PBN {@code durableBelow} survives a crash. From
 * cluster version 7 an archiving worker appends its {@link SealedLogReport} ({@code sealed}; null:
 * none, as from an older worker or one without a bucket).
 */
public record DataSynced(long requestId, long durableBelow, SealedLogReport sealed) implements Message {
    /** A DATA_SYNCED without a sealed-log report (cluster versions before 7). */
    public DataSynced(long requestId, long durableBelow) {
        this(requestId, durableBelow, null);
    }

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
