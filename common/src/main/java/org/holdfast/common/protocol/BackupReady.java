package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * BACKUP_READY (0x11), server to agent: the session is open; {@code mode} says what to send.
 * {@code possessionSecret} (32 random bytes, new for every session) keys the possession tags the
 * agent sends with ENTRIES ({@link org.holdfast.common.hash.PossessionProof}).
 *
 * <p>The secret array is owned by the message and not copied.
 */
public record BackupReady(long sessionId, long parentSequence, int blockSize, BackupMode mode, byte[] possessionSecret)
        implements Message {
    /** Bytes of the per-session possession secret. */
    public static final int SECRET_BYTES = 32;

    public BackupReady {
        if (mode == null) {
            throw new IllegalArgumentException("mode must not be null");
        }
        if (possessionSecret == null || possessionSecret.length != SECRET_BYTES) {
            throw new IllegalArgumentException("possession secret must be exactly " + SECRET_BYTES + " bytes");
        }
    }

    @Override
    public MessageType type() {
        return MessageType.BACKUP_READY;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BackupReady r && r.sessionId == sessionId && r.parentSequence == parentSequence
                && r.blockSize == blockSize && r.mode == mode && Arrays.equals(r.possessionSecret, possessionSecret);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(sessionId) * 31 + Arrays.hashCode(possessionSecret);
    }

    /** Leaves the secret out: it would let a reader of the log forge possession tags for this session. */
    @Override
    public String toString() {
        return "BackupReady[sessionId=" + sessionId + ", parentSequence=" + parentSequence + ", blockSize=" + blockSize
                + ", mode=" + mode + ", possessionSecret=***]";
    }
}
