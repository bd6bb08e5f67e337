package org.holdfast.server.gc;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.PolicyStore;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.MetadataBatch;

/**
 * Deletions at an operator's request, before retention would have made them: a whole volume
 * ({@link #deleteVolume}, with its crash protocol and the completion at start,
 * {@link #finishInterrupted}) or one snapshot ({@link #deleteSnapshot}). Both are refused, with
 * nothing changed, for a snapshot under a hold or lock.
 *
 * <p>Locks, in this order: the cycle lock (shared with {@link RetentionCycle}, so a deletion never
 * interleaves with a cycle's plan and sweep), then the {@link VolumeGate} (volume deletion only:
 * no backup in it), then the commit monitor around the catalog batches (so no commit, pin or hold
 * interleaves). The holds are checked again under the commit monitor, since a hold may arrive
 * while the log is made durable.
 *
 * <p>Atomic from the API's view: a deletion that cannot proceed (the GC log cannot be written, a
 * full disk) fails before its catalog batch, changing nothing. One that fails after it (its
 * snapshots are gone) is <em>pending</em>: {@link #deleting} hides the volume from the API, it stays
 * closed to backups, and {@link #finishPending} (the next deletion, GC cycle or reclaim-now)
 * completes it once space is back.
 */
final class Deletions {
    private static final System.Logger LOG = System.getLogger(Deletions.class.getName());

    private final Catalog catalog;
    private final PolicyStore policyStore;
    private final GcRecords records;
    private final VolumeStates states;
    private final Pins pins;
    private final RetentionLocks locks;
    private final OperationLog ops;
    private final BoscPipeline pipeline;
    private final Object cycleLock;
    private final Supplier<Object> commitMonitor;
    /** Volumes whose snapshots are deleted but whose map and record are not yet: internal id to the gate release. */
    private final Map<Long, Runnable> pending = new java.util.concurrent.ConcurrentHashMap<>();

    Deletions(Catalog catalog, GcRecords records, VolumeStates states, Pins pins, RetentionLocks locks, OperationLog ops,
              BoscPipeline pipeline, Object cycleLock, Supplier<Object> commitMonitor, PolicyStore policyStore) {
        this.catalog = catalog;
        this.policyStore = policyStore;
        this.records = records;
        this.states = states;
        this.pins = pins;
        this.locks = locks;
        this.ops = ops;
        this.pipeline = pipeline;
        this.cycleLock = cycleLock;
        this.commitMonitor = commitMonitor;
    }

    /** See {@link GcService#deleteVolume}. */
    GcService.VolumeDeletion deleteVolume(VolumeId volume, VolumeGate gate) {
        ops.requireHealthy();
        synchronized (cycleLock) {
            finishPending();
            VolumeRecord existing = catalog.requireVolume(volume);
            if (pending.containsKey(existing.internalId())) {
                throw new org.holdfast.server.catalog.UnknownVolumeException(volume.name());
            }
            // fail fast, before anything changes, if the GC log cannot take the operation (a full disk)
            pipeline.awaitDurable();
            if (!gate.tryExclude(volume.name())) {
                throw new GcConflictException("volume '" + volume.name() + "' has a backup in progress; delete it after the backup ends");
            }
            // once the volume's snapshots are gone, it stays closed to backups until the deletion is
            // complete (a failure here leaves that to the next start, which must not find a new backup in it)
            boolean keepClosed = false;
            try {
                VolumeRecord v;
                int snapshots;
                long released;
                long opId;
                synchronized (commitMonitor.get()) {
                    v = catalog.requireVolume(volume);
                    List<GcRecords.SnapshotGc> gcs = records.snapshots(v.internalId());
                    List<Long> held = gcs.stream().filter(GcRecords.SnapshotGc::held).map(GcRecords.SnapshotGc::sequence).toList();
                    if (!held.isEmpty()) {
                        throw locks.refusal(v, held.get(0), "volume '" + volume.name() + "' cannot be deleted while a snapshot is"
                                + " under a hold or lock (sequences " + held + ")");
                    }
                    for (GcRecords.SnapshotGc sg : gcs) {
                        if (sg.keepLastPinned()) {
                            pins.releaseKeepLast(volume, sg.sequence());
                        }
                    }
                    List<SnapshotRecord> snaps = catalog.snapshots(v);
                    snapshots = snaps.size();
                    long newest = snaps.isEmpty() ? 0 : snaps.get(snaps.size() - 1).sequence();
                    long blockCount = snaps.isEmpty() ? 0 : snaps.get(snaps.size() - 1).blockCount();
                    long[] pbns = newest == 0 ? new long[0] : SnapshotScan.pbns(catalog, v.internalId(), newest, blockCount);
                    released = pbns.length;
                    opId = ops.nextId();
                    try (MetadataBatch batch = new MetadataBatch()) {
                        ops.record(batch, new GcRecords.Op(opId, GcRecords.KIND_DELETE_VOLUME, v.internalId(), newest, blockCount));
                        for (SnapshotRecord s : snaps) {
                            catalog.deleteSnapshot(batch, v, s.sequence());
                        }
                        for (GcRecords.SnapshotGc sg : gcs) {
                            records.deleteSnapshot(batch, v.internalId(), sg.sequence());
                        }
                        records.deletePolicy(batch, v.internalId());
                        policyStore.deleteAssignment(batch, v.internalId()); // its named policy forgets it in the same batch
                        catalog.write(batch);
                    }
                    keepClosed = true;
                    pending.put(v.internalId(), () -> gate.release(volume.name()));
                    ops.written(opId);
                    KillPoints.hit(KillPoints.GC_DELETE_VOLUME_AFTER_CATALOG_BATCH);
                    states.forget(v.internalId());
                    ops.apply(opId, new GcOperation.Release(pbns));
                }
                long entries;
                try {
                    pipeline.awaitDurable();
                    ops.requireHealthy(); // the op must be in the GC log before the map it is rebuilt from goes
                    KillPoints.hit(KillPoints.GC_DELETE_VOLUME_AFTER_GC_LOG);
                    entries = deleteMapAndVolume(v, opId);
                } catch (KillPoints.Killed e) {
                    throw e;
                } catch (RuntimeException e) {
                    // the snapshots are gone: from the API's view the volume is deleted; the rest waits for space
                    LOG.log(System.Logger.Level.WARNING, "volume '" + volume.name() + "' is deleted, but freeing its map waits"
                            + " until the GC log can be written (" + e.getMessage() + "); it completes at the next deletion,"
                            + " GC cycle or reclaim-now", e);
                    return new GcService.VolumeDeletion(volume.name(), snapshots, released, 0);
                }
                pending.remove(v.internalId());
                keepClosed = false;
                return new GcService.VolumeDeletion(volume.name(), snapshots, released, entries);
            } finally {
                if (!keepClosed) {
                    gate.release(volume.name());
                }
            }
        }
    }

    /** True while volume {@code internalId}'s deletion is pending: the API treats it as gone. */
    boolean deleting(long internalId) {
        return pending.containsKey(internalId);
    }

    /**
     * Completes the deletions that failed after their catalog batch (see the class comment). Under
     * the cycle lock; throws if the GC log still cannot be written.
     */
    void finishPending() {
        if (pending.isEmpty()) {
            return;
        }
        synchronized (cycleLock) {
            Map<Long, VolumeRecord> byId = new HashMap<>();
            for (VolumeRecord v : catalog.volumes()) {
                byId.put(v.internalId(), v);
            }
            for (GcRecords.Op op : records.opsAfter(0)) {
                VolumeRecord v = byId.get(op.volume());
                if (op.kind() == GcRecords.KIND_DELETE_VOLUME && v != null && pending.containsKey(v.internalId())) {
                    ops.requireHealthy();
                    pipeline.awaitDurable();
                    deleteMapAndVolume(v, op.id());
                    Runnable release = pending.remove(v.internalId());
                    release.run();
                    LOG.log(System.Logger.Level.INFO, "finished the deletion of volume '" + v.name().name() + "'");
                }
            }
        }
    }

    /**
     * Completes the volume deletions a crash interrupted after their operation was logged. At open,
     * after the re-drive, before any commit or request: no lock needed.
     */
    void finishInterrupted() {
        Map<Long, VolumeRecord> byId = new HashMap<>();
        for (VolumeRecord v : catalog.volumes()) {
            byId.put(v.internalId(), v);
        }
        for (GcRecords.Op op : records.opsAfter(0)) {
            if (op.kind() == GcRecords.KIND_DELETE_VOLUME && byId.containsKey(op.volume())) {
                pipeline.awaitDurable();
                deleteMapAndVolume(byId.get(op.volume()), op.id());
            }
        }
    }

    private long deleteMapAndVolume(VolumeRecord v, long opId) {
        long[] n = {0, 0};
        MetadataBatch[] batch = {new MetadataBatch()};
        try {
            catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
                catalog.deleteMapEntry(batch[0], v.internalId(), lbn, birth);
                n[0]++;
                if (++n[1] == 10_000) {
                    catalog.write(batch[0]);
                    batch[0].close();
                    batch[0] = new MetadataBatch();
                    n[1] = 0;
                }
                return true;
            });
            catalog.deleteVolume(batch[0], v);
            records.deleteOp(batch[0], opId); // durable in the GC log: no re-drive needs it
            catalog.write(batch[0]);
        } finally {
            batch[0].close();
        }
        return n[0];
    }

    /** See {@link GcService#deleteSnapshot}. */
    void deleteSnapshot(VolumeId volume, long sequence) {
        ops.requireHealthy();
        synchronized (cycleLock) {
            VolumeRecord v = catalog.requireVolume(volume);
            catalog.snapshot(v, sequence).orElseThrow(() -> new UnknownSnapshotException(volume.name(), sequence));
            // loaded before the snapshot record goes: a first load after it would not know the sequence
            VolumeStates.State g = states.of(v);
            GcRecords.SnapshotGc sg = records.snapshot(v.internalId(), sequence).orElse(null);
            if (sg != null && sg.held()) {
                throw locks.refusal(v, sequence, "the snapshot cannot be deleted");
            }
            if (sequence == v.latestSequence()) {
                throw new GcConflictException("snapshot " + volume.name() + "@" + sequence + " is the newest one (the volume's current "
                        + "state) and cannot be deleted alone; delete the volume instead");
            }
            if (sg != null && sg.keepLastPinned()) {
                pins.releaseKeepLast(volume, sequence);
            }
            pipeline.awaitDurable(); // every operation naming it is in the GC log before it goes
            synchronized (commitMonitor.get()) {
                GcRecords.SnapshotGc now = records.snapshot(v.internalId(), sequence).orElse(null);
                if (now != null && now.held()) {
                    throw locks.refusal(v, sequence, "the snapshot cannot be deleted");
                }
                try (MetadataBatch batch = new MetadataBatch()) {
                    catalog.deleteSnapshot(batch, v, sequence);
                    records.deleteSnapshot(batch, v.internalId(), sequence);
                    catalog.write(batch);
                }
                g.expiries.remove(sequence);
            }
            MapPruner.prune(catalog, v);
        }
    }
}
