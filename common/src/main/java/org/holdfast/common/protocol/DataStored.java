package org.holdfast.common.protocol;

/**
 * DATA_STORED (0x4E), worker to master: the {@code count} blocks of DATA_STORE {@code requestId} are
 * appended (not yet durable: DATA_SYNC) as PBNs {@code first .. first + count - 1}, in the request's order.
 */
public record DataStored(long requestId, long first, int count) implements Message {
    public DataStored {
        if (first < 1 || count < 1 || count > ProtocolLimits.MAX_FRAME_MEMBERS || first > Long.MAX_VALUE - count) {
            throw new IllegalArgumentException("DATA_STORED needs a first PBN of at least 1 and a count of 1.."
                    + ProtocolLimits.MAX_FRAME_MEMBERS + ", got " + first + " and " + count);
        }
    }

    @Override
    public MessageType type() {
        return MessageType.DATA_STORED;
    }
}
