package org.holdfast.common.protocol;

import java.util.Arrays;

/**
 * BACKUP_READY (0x11), server to agent: the session is open; {@code mode} says what to send.
 * {@code possessionSecret} (32 random bytes, new for every session) keys the possession tags the
 * agent sends with ENTRIES ({@link org.holdfast.common.hash.PossessionProof}).
 *
 * {@code fullReason} (protocol version 5) says why a full backup is asked for; {@link FullReason#UNSTATED}
 * travels as the version 2 frame (no byte), what an older agent reads.
 *
 * <p>The secret array is owned by the message and not copied.
 */
public record BackupReady(long sessionId, long parentSequence, int blockSize, BackupMode mode, byte[] possessionSecret,
                          FullReason fullReason) implements Message {
    /** Bytes of the per-session possession secret. */
    public static final int SECRET_BYTES = 32;

    public BackupReady {
        if (mode == null || fullReason == null) {
            throw new IllegalArgumentException("mode and full reason must not be null");
        }
        if (mode == BackupMode.INCREMENTAL && fullReason != FullReason.UNSTATED) {
            throw new IllegalArgumentException("an incremental backup has no full reason");
        }
        if (possessionSecret == null || possessionSecret.length != SECRET_BYTES) {
            throw new IllegalArgumentException("possession secret must be exactly " + SECRET_BYTES + " bytes");
        }
    }

    /** The form before version 5: the reason is not said. */
    public BackupReady(long sessionId, long parentSequence, int blockSize, BackupMode mode, byte[] possessionSecret) {
        this(sessionId, parentSequence, blockSize, mode, possessionSecret, FullReason.UNSTATED);
    }

    /** This message as a connection that agreed on {@code protocolVersion} carries it: without the reason before version 5. */
    public BackupReady forVersion(int protocolVersion) {
        if (protocolVersion >= BackupBegin.SNAPSHOT_ID_SINCE_VERSION || fullReason == FullReason.UNSTATED) {
            return this;
        }
        return new BackupReady(sessionId, parentSequence, blockSize, mode, possessionSecret);
    }

    /** Body bytes: 53, or 54 with a full reason. */
    int bodyBytes() {
        return 8 + 8 + 4 + 1 + SECRET_BYTES + (fullReason == FullReason.UNSTATED ? 0 : 1);
    }

    @Override
    public MessageType type() {
        return MessageType.BACKUP_READY;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BackupReady r && r.sessionId == sessionId && r.parentSequence == parentSequence
                && r.blockSize == blockSize && r.mode == mode && r.fullReason == fullReason
                && Arrays.equals(r.possessionSecret, possessionSecret);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(sessionId) * 31 + Arrays.hashCode(possessionSecret);
    }

    /** Leaves the secret out: it would let a reader of the log forge possession tags for this session. */
    @Override
    public String toString() {
        return "BackupReady[sessionId=" + sessionId + ", parentSequence=" + parentSequence + ", blockSize=" + blockSize
                + ", mode=" + mode + ", fullReason=" + fullReason + ", possessionSecret=***]";
    }
}
