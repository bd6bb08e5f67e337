package org.holdfast.server.restore;

import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.SnapshotInfo;
import org.holdfast.common.protocol.SnapshotList;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;

/** Answers LIST_SNAPSHOTS from the catalog. */
public final class SnapshotLister {
    private final Catalog catalog;

    public SnapshotLister(Catalog catalog) {
        this.catalog = catalog;
    }

    /**
     * The volume's snapshots, oldest first.
     *
     * @throws org.holdfast.server.catalog.UnknownVolumeException if the volume does not exist
     */
    public SnapshotList list(VolumeId volume) {
        List<SnapshotRecord> all = catalog.snapshots(volume);
        if (all.size() > ProtocolLimits.MAX_SNAPSHOT_LIST) {
            all = all.subList(all.size() - ProtocolLimits.MAX_SNAPSHOT_LIST, all.size()); // the newest ones fit
        }
        return new SnapshotList(all.stream()
                .map(s -> new SnapshotInfo(s.sequence(), s.createdAtMillis(), s.volumeBytes(), s.blockSize(), s.logicalBytes(),
                        s.changedBlocks(), s.storedBytes()))
                .toList());
    }
}
