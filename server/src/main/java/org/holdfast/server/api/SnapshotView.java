package org.holdfast.server.api;

import java.time.Instant;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.gc.RetentionLocks;

/**
 * A snapshot in the API; {@code id} is "volume@sequence". {@code lockMode} ({@code governance} or
 * {@code compliance}) and {@code lockUntil} (ISO-8601, null for none) are null when it is not locked.
 */
public record SnapshotView(String id, String volume, long sequence, long createdAtMillis, long volumeBytes, int blockSize,
                           long logicalBytes, long changedBlocks, long sentBlocks, long newBlocks, long storedBytes,
                           String lockMode, String lockUntil, String keptBy) {
    static SnapshotView of(SnapshotRecord s, RetentionLocks.Lock lock, String keptBy) {
        return new SnapshotView(s.id().toString(), s.volume().name(), s.sequence(), s.createdAtMillis(), s.volumeBytes(),
                s.blockSize(), s.logicalBytes(), s.changedBlocks(), s.sentBlocks(), s.newBlocks(), s.storedBytes(),
                lock == null ? null : lock.mode().wireName(),
                lock == null || lock.untilMillis() == null ? null : Instant.ofEpochMilli(lock.untilMillis()).toString(), keptBy);
    }
}
