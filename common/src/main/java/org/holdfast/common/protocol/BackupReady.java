package org.holdfast.common.protocol;

/** BACKUP_READY (0x11), server to agent: the session is open; {@code mode} says what to send. */
public record BackupReady(long sessionId, long parentSequence, int blockSize, BackupMode mode) implements Message {
    public BackupReady {
        if (mode == null) {
            throw new IllegalArgumentException("mode must not be null");
        }
    }

    @Override
    public MessageType type() {
        return MessageType.BACKUP_READY;
    }
}
