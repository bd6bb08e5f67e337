package org.holdfast.server.store;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.holdfast.common.kill.KillPoints;

/**
 * The sync of a {@link DataStore} ("Durability protocol" there): forces the active log, then writes
 * the pending locations, the repaired ones and the new durable point in one synced batch; and the
 * durable point as of the last sync, which tells the logs compaction may rewrite. The locks are the
 * store's (order: relocation, sync, append).
 */
final class StoreSync {
    private final MetadataDb db;
    private final LocationIndex locations;
    private final OpenLogs logs;
    private final ActiveLog active;
    private final BlockRepair repair;
    private final FsyncPolicy fsync;
    /** Backend s3: told which logs are final after each sync; null for a local store. */
    private final LogArchive archive;
    private final ReentrantReadWriteLock relocation;
    private final Object syncLock;
    private final Object appendLock;
    // guarded by appendLock (the store appends to it)
    private final UnindexedLocations pending;
    private final AtomicLong syncs = new AtomicLong();

    // guarded by syncLock
    private int durableLogId;
    private long durableLength;

    /** A sync from durable point ({@code durableLogId}, {@code durableLength}), where recovery left the store. */
    StoreSync(MetadataDb db, LocationIndex locations, OpenLogs logs, ActiveLog active, BlockRepair repair, FsyncPolicy fsync,
            LogArchive archive, ReentrantReadWriteLock relocation, Object syncLock, Object appendLock, UnindexedLocations pending,
            int durableLogId, long durableLength) {
        this.db = db;
        this.locations = locations;
        this.logs = logs;
        this.active = active;
        this.repair = repair;
        this.fsync = fsync;
        this.archive = archive;
        this.relocation = relocation;
        this.syncLock = syncLock;
        this.appendLock = appendLock;
        this.pending = pending;
        this.durableLogId = durableLogId;
        this.durableLength = durableLength;
    }

    /** Syncs done since the store opened. */
    long syncs() {
        return syncs.get();
    }

    /** See {@link DataStore#compactableBelow}. */
    int compactableBelow() {
        synchronized (syncLock) {
            return durableLogId;
        }
    }

    /** See {@link DataStore#durablePoint}. */
    long[] durablePoint() {
        synchronized (syncLock) {
            return new long[] {durableLogId, durableLength};
        }
    }

    /** See {@link DataStore#sync}; the caller refused a read-only store. */
    void sync() {
        // shared relocation lock: a repair's location switch must not interleave with a compaction's
        relocation.readLock().lock();
        try {
            syncLocked();
        } finally {
            relocation.readLock().unlock();
        }
    }

    private void syncLocked() {
        synchronized (syncLock) {
            DataLog log;
            long length;
            int count;
            long[] repaired;
            try (MetadataBatch batch = new MetadataBatch()) {
                synchronized (appendLock) {
                    logs.ensureOpen();
                    log = active.log();
                    length = log.size();
                    count = pending.size();
                    if (count == 0 && log.id() == durableLogId && length == durableLength) {
                        return;
                    }
                    for (int i = 0; i < count; i++) {
                        pending.putTo(locations, batch, i);
                    }
                    // Repairs: the PBN's location moves to the new copy in the same synced batch as the
                    // durable point that covers it, and the bad mark goes with it (see BlockRepair).
                    repaired = repair.switchInto(batch);
                }
                if (fsync.forces()) {
                    log.force();
                } else {
                    log.write(); // the durable point must never lie past the file's end
                }
                if (repaired.length > 0) {
                    KillPoints.hit(KillPoints.REPAIR_BEFORE_SWITCH);
                }
                new DurablePoint(log.id(), length).write(db, batch);
            }
            if (repaired.length > 0) {
                KillPoints.hit(KillPoints.REPAIR_AFTER_SWITCH);
            }
            synchronized (appendLock) {
                pending.dropFirst(count);
            }
            repair.switched(repaired);
            durableLogId = log.id();
            durableLength = length;
            syncs.incrementAndGet();
            if (archive != null) {
                archive.sealedBelow(durableLogId); // the logs below the durable point's are final now
            }
        }
    }
}
