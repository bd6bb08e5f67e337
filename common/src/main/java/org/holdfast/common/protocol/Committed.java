package org.holdfast.common.protocol;

/**
 * COMMITTED (0x17), server to agent: the snapshot is durable; its sequence and the session's counts,
 * and (protocol version 5) {@code snapshotId}, the snapshot's random identity that the agent keeps
 * and sends back as BACKUP_BEGIN's {@code baseSnapshotId}. With id 0 (unknown) the frame travels in
 * its version 2 form of 56 bytes; a server sends a non-zero id only on a connection that agreed on 5.
 */
public record Committed(long sequence, long createdAtMillis, long logicalBytes, long changedBlocks, long sentBlocks,
                        long newBlocks, long storedBytes, long snapshotId) implements Message {
    /** The form before version 5: no snapshot identity. */
    public Committed(long sequence, long createdAtMillis, long logicalBytes, long changedBlocks, long sentBlocks,
                     long newBlocks, long storedBytes) {
        this(sequence, createdAtMillis, logicalBytes, changedBlocks, sentBlocks, newBlocks, storedBytes, 0);
    }

    /** This message as a connection that agreed on {@code protocolVersion} carries it: without the id before version 5. */
    public Committed forVersion(int protocolVersion) {
        if (protocolVersion >= BackupBegin.SNAPSHOT_ID_SINCE_VERSION || snapshotId == 0) {
            return this;
        }
        return new Committed(sequence, createdAtMillis, logicalBytes, changedBlocks, sentBlocks, newBlocks, storedBytes);
    }

    /** Body bytes: 56, or 64 with a snapshot id. */
    int bodyBytes() {
        return snapshotId == 0 ? 7 * 8 : 8 * 8;
    }

    @Override
    public MessageType type() {
        return MessageType.COMMITTED;
    }
}
