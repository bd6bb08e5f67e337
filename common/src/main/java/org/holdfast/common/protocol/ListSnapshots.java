package org.holdfast.common.protocol;

/** LIST_SNAPSHOTS (0x20), agent to server: which committed snapshots does {@code volume} have. */
public record ListSnapshots(String volume) implements Message {
    public ListSnapshots {
        WireStrings.check("volume", volume, ProtocolLimits.MAX_VOLUME_NAME);
    }

    @Override
    public MessageType type() {
        return MessageType.LIST_SNAPSHOTS;
    }
}
