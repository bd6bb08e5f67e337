package org.holdfast.server.api;

import org.holdfast.server.catalog.SnapshotRecord;

/** A snapshot in the API; {@code id} is "volume@sequence". */
public record SnapshotView(String id, String volume, long sequence, long createdAtMillis, long volumeBytes, int blockSize,
                           long logicalBytes, long changedBlocks, long sentBlocks, long newBlocks, long storedBytes) {
    static SnapshotView of(SnapshotRecord s) {
        return new SnapshotView(s.id().toString(), s.volume().name(), s.sequence(), s.createdAtMillis(), s.volumeBytes(),
                s.blockSize(), s.logicalBytes(), s.changedBlocks(), s.sentBlocks(), s.newBlocks(), s.storedBytes());
    }
}
