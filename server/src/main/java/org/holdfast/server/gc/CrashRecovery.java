package org.holdfast.server.gc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.gc.GcStoreException;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataBatch;

/**
 * What {@link GcService#open} does after the pipeline has replayed its log, so that the GC log
 * again accounts for everything the catalog holds: refuse an empty GC directory beside a catalog
 * with GC history; re-drive every operation record above {@link GcBookkeeping#lastAppliedOp()}
 * (commits rebuild their delta from the map, streamed, and log the parts the GC log lacks, also
 * those of a commit in parts whose record is at or below that mark; pins, unpins and raises rescan their snapshot, volume
 * deletions rescan the newest state); finish the volume deletions a crash interrupted; protect
 * again the blocks stored since the previous start.
 *
 * <p>Lock: runs once, before the ingest accepts sessions and before any request, so no commit can
 * run; the re-drive still holds this object's monitor, as it did the service's, for the memory
 * effects on the operation counter.
 */
final class CrashRecovery {
    private final Path gcDir;
    private final Catalog catalog;
    private final DataStore dataStore;
    private final GcRecords records;
    private final VolumeStates states;
    private final OperationLog ops;
    private final BoscPipeline pipeline;
    private final GcBookkeeping bookkeeping;
    private final GraceGuard guard;
    private final Deletions deletions;

    CrashRecovery(Path gcDir, Catalog catalog, DataStore dataStore, GcRecords records, VolumeStates states, OperationLog ops,
                  BoscPipeline pipeline, GcBookkeeping bookkeeping, GraceGuard guard, Deletions deletions) {
        this.gcDir = gcDir;
        this.catalog = catalog;
        this.dataStore = dataStore;
        this.records = records;
        this.states = states;
        this.ops = ops;
        this.pipeline = pipeline;
        this.bookkeeping = bookkeeping;
        this.guard = guard;
        this.deletions = deletions;
    }

    /** Brings the GC log up to the catalog; throws (pipeline closed) if the GC metadata was lost. */
    void recover() {
        if (pipeline.openedEmpty() && catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1) > 1) {
            // the catalog has counted operations that this (new, empty) GC directory never saw:
            // counting on from zero would leave referenced blocks uncounted
            pipeline.close();
            // opening wrote a checkpoint into the empty directory: without this, the next start
            // would no longer see it as empty and would count from zero
            deleteCheckpoint();
            throw new IllegalStateException("GC directory " + gcDir + " is empty but the catalog has "
                    + "GC history: the GC metadata was lost; restore the directory, or rebuild it from the catalog with the "
                    + "server stopped: holdfast-server gc-rebuild --data-dir " + gcDir.toAbsolutePath().getParent());
        }
        redrive();
        deletions.finishInterrupted();
        reprotectRecentBlocks();
    }

    private void deleteCheckpoint() {
        try {
            Files.deleteIfExists(gcDir.resolve("checkpoint"));
        } catch (IOException e) {
            throw new GcStoreException("gc", gcDir, "checkpoint", "cannot delete: " + e.getMessage(), e);
        }
    }

    /** Applies every operation record above the GC log's last one, in order (at open, and when paused bookkeeping resumes). */
    void redrive() {
        // no commit can run yet: the ingest starts after the service is open
        synchronized (this) {
            Map<Long, VolumeRecord> byId = new HashMap<>();
            for (VolumeRecord v : catalog.volumes()) {
                byId.put(v.internalId(), v);
            }
            long last = bookkeeping.lastAppliedOp();
            List<GcRecords.Op> todo = new ArrayList<>();
            // a commit logged in parts may have stopped after some of them: its record is at or below the mark
            records.opAtOrBefore(last).filter(op -> op.lastId() > last).ifPresent(todo::add);
            todo.addAll(records.opsAfter(last));
            for (GcRecords.Op op : todo) {
                VolumeRecord v = byId.get(op.volume());
                if (v == null) {
                    throw new IllegalStateException("GC operation " + op.id() + " names unknown volume " + op.volume());
                }
                if (op.kind() == GcRecords.KIND_COMMIT) {
                    CommitParts.log(v.name(), op.sequence(), states.of(v).expiries, op.id(), op.parts(), op.partEntries(), last,
                            visitor -> SnapshotScan.forEachDeltaEntry(catalog, v.internalId(), op.sequence(), visitor), bookkeeping::apply);
                } else {
                    bookkeeping.apply(op.id(), operationOf(op, v));
                }
                ops.redriven(op.lastId());
            }
        }
    }

    private GcOperation operationOf(GcRecords.Op op, VolumeRecord v) {
        switch (op.kind()) {
            case GcRecords.KIND_PIN -> {
                return new GcOperation.Pin(scan(v, op.sequence()));
            }
            case GcRecords.KIND_UNPIN -> {
                return new GcOperation.Unpin(scan(v, op.sequence()));
            }
            case GcRecords.KIND_RAISE -> {
                return new GcOperation.RaiseExpiry(scan(v, op.sequence()), op.expiry());
            }
            case GcRecords.KIND_DELETE_VOLUME -> {
                // the snapshot records are gone already; the map stays until this op is durable
                return new GcOperation.Release(SnapshotScan.pbns(catalog, v.internalId(), op.sequence(), op.expiry()));
            }
            default -> throw new IllegalStateException("GC operation " + op.id() + " has unknown kind " + op.kind());
        }
    }

    private long[] scan(VolumeRecord v, long seq) {
        SnapshotRecord s = catalog.snapshot(v, seq).orElseThrow(() -> new UnknownSnapshotException(v.name().name(), seq));
        return SnapshotScan.pbns(catalog, v.internalId(), seq, s.blockCount());
    }

    /**
     * A backup killed by a crash may have stored blocks whose protection record never reached the
     * GC log: the GMA would not know them and no sweep would ever free them. So every block stored
     * since the previous start is protected again (grace), which makes it known; an unreferenced one
     * is then swept once the grace has passed. Cost: one pass over the location index.
     */
    private void reprotectRecentBlocks() {
        long from = catalog.db().metaLong(GcRecords.PROTECT_SCAN_FROM, 1);
        long to = dataStore.nextPbn();
        if (from >= to) {
            return;
        }
        dataStore.locations().forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            if (pbn >= from && pbn < to) {
                guard.protect(pbn);
            }
            return true;
        });
        pipeline.awaitDurable();
        try (MetadataBatch batch = new MetadataBatch()) {
            catalog.db().putMetaLong(batch, GcRecords.PROTECT_SCAN_FROM, to);
            catalog.write(batch);
        }
    }
}
