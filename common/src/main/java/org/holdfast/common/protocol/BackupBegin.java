package org.holdfast.common.protocol;

/**
 * BACKUP_BEGIN (0x10), agent to server. {@code baseSequence} is the snapshot the agent's state
 * describes, 0 if none. Block size and volume name are checked by the server, not here.
 */
public record BackupBegin(String volume, int blockSize, long volumeBytes, long baseSequence) implements Message {
    public BackupBegin {
        WireStrings.check("volume", volume, ProtocolLimits.MAX_VOLUME_NAME);
    }

    @Override
    public MessageType type() {
        return MessageType.BACKUP_BEGIN;
    }
}
