package org.holdfast.common.protocol;

import java.util.List;

/** SNAPSHOT_LIST (0x21), server to agent: the volume's committed snapshots, in any order the server likes (oldest first by convention). */
public record SnapshotList(List<SnapshotInfo> snapshots) implements Message {
    public SnapshotList {
        if (snapshots == null) {
            throw new IllegalArgumentException("snapshots must not be null");
        }
        if (snapshots.size() > ProtocolLimits.MAX_SNAPSHOT_LIST) {
            throw new IllegalArgumentException(snapshots.size() + " snapshots, limit " + ProtocolLimits.MAX_SNAPSHOT_LIST);
        }
        snapshots = List.copyOf(snapshots);
    }

    @Override
    public MessageType type() {
        return MessageType.SNAPSHOT_LIST;
    }
}
