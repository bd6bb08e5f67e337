package org.holdfast.common.protocol;

/**
 * BACKUP_BEGIN (0x10), agent to server. {@code baseSequence} is the snapshot the agent's state
 * describes, 0 if none; {@code baseSnapshotId} that snapshot's identity as COMMITTED reported it
 * (protocol version 5), 0 if unknown. With id 0 the frame travels in its version 2 form (no id),
 * what an older server reads; an agent sends a non-zero id only to a server whose HELLO_OK said 5
 * or more. Block size and volume name are checked by the server, not here.
 */
public record BackupBegin(String volume, int blockSize, long volumeBytes, long baseSequence, long baseSnapshotId)
        implements Message {
    /** The protocol version that added {@code baseSnapshotId} here and {@code snapshotId} to COMMITTED. */
    public static final int SNAPSHOT_ID_SINCE_VERSION = 5;

    public BackupBegin {
        WireStrings.check("volume", volume, ProtocolLimits.MAX_VOLUME_NAME);
    }

    /** The form before version 5: the base snapshot's identity is unknown. */
    public BackupBegin(String volume, int blockSize, long volumeBytes, long baseSequence) {
        this(volume, blockSize, volumeBytes, baseSequence, 0);
    }

    /** Body bytes after the volume name: 20, or 28 with a base snapshot id. */
    int fixedBytes() {
        return baseSnapshotId == 0 ? 4 + 8 + 8 : 4 + 8 + 8 + 8;
    }

    @Override
    public MessageType type() {
        return MessageType.BACKUP_BEGIN;
    }
}
