package org.holdfast.common.protocol;

/** RESTORE (0x22), agent to server: stream snapshot {@code sequence} of {@code volume} from {@code fromLbn}. */
public record Restore(String volume, long sequence, long fromLbn) implements Message {
    public Restore {
        WireStrings.check("volume", volume, ProtocolLimits.MAX_VOLUME_NAME);
    }

    @Override
    public MessageType type() {
        return MessageType.RESTORE;
    }
}
