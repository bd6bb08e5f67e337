package org.holdfast.client.upload;

import java.time.Duration;
import java.util.function.Consumer;
import org.holdfast.client.AgentException;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.scan.StateFile;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.SnapshotInfo;
import org.holdfast.common.protocol.SnapshotList;

/**
 * The size of the snapshot a backup builds on (BACKUP_READY's parent), for the size-change warning:
 * from the state file when it describes that snapshot, else from the server's SNAPSHOT_LIST, asked
 * for after the commit (no state file, or another agent committed the parent). BACKUP_READY carries
 * no size, and every server version answers LIST_SNAPSHOTS, so no wire change is needed.
 */
final class ParentSize {
    /** Wait for the listing; a backup that committed never fails for want of it. */
    static final Duration LIST_TIMEOUT = Duration.ofMinutes(1);

    private final long parentSequence; // 0: the volume had no snapshot, nothing to compare
    private final long knownBytes; // -1: the state file does not describe the parent

    private ParentSize(long parentSequence, long knownBytes) {
        this.parentSequence = parentSequence;
        this.knownBytes = knownBytes;
    }

    /** The parent {@code parentSequence}; its size is {@code prev}'s when {@code prev} describes it. */
    static ParentSize of(StateFile.PreviousState prev, long parentSequence) {
        boolean stateKnows = prev != null && parentSequence != 0 && prev.sequence() == parentSequence;
        return new ParentSize(parentSequence, stateKnows ? prev.volumeBytes() : -1);
    }

    /** True if {@link #compare} asks the server. */
    private boolean asksServer() {
        return parentSequence != 0 && knownBytes < 0;
    }

    /**
     * The size change from the parent to {@code volumeBytes}, or null if none (or the parent's size is
     * unknown: it is gone from the server's list, or the listing failed, which {@code notices} hears).
     * Call on an idle connection (after COMMITTED).
     */
    BackupResult.SizeChange compare(ServerConnection conn, String volume, long volumeBytes, Consumer<String> notices) {
        long from = knownBytes;
        if (asksServer()) {
            from = listed(conn, volume, notices);
        }
        return parentSequence != 0 && from >= 0 && from != volumeBytes
                ? new BackupResult.SizeChange(parentSequence, from, volumeBytes) : null;
    }

    private long listed(ServerConnection conn, String volume, Consumer<String> notices) {
        try {
            conn.send(new ListSnapshots(volume));
            SnapshotList list = conn.expect(SnapshotList.class, LIST_TIMEOUT);
            return list.snapshots().stream().filter(s -> s.sequence() == parentSequence)
                    .mapToLong(SnapshotInfo::volumeBytes).findFirst().orElse(-1); // deleted since: nothing to compare
        } catch (AgentException e) {
            notices.accept("could not compare the source's size with snapshot " + volume + "@" + parentSequence
                    + " (listing the volume's snapshots failed: " + e.getMessage() + ")");
            return -1;
        }
    }
}
