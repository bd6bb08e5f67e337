package org.holdfast.server.gc;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.check.Fsck;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.gc.retention.ExpiryCalculator;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.gc.retention.RetentionPlanner;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.gc.sweep.SweepReport;
import org.holdfast.gc.sweep.Sweeper;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.holdfast.server.catalog.SnapshotDelta;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.FingerprintIndex;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.server.store.Compactor;
import org.holdfast.server.store.DataStore;
import org.rocksdb.WriteBatch;

/**
 * The server's garbage collector: hybrid bookkeeping driven by commits, retention, holds, sweeps
 * and fsck, over the gc-engine.
 *
 * <h2>Operations and crash atomicity</h2>
 * Every GC operation (commit, pin, unpin, raise) gets an id from {@code gc.next-op-id} and a record
 * {@code gc/o<id>} written in the same synced catalog batch as the change it accounts for; only
 * after that batch is durable is it handed to {@link GcBookkeeper#apply}. All of this happens under
 * the commit monitor (the {@code SnapshotCommit} object), so ids reach the bookkeeper in order. At
 * {@link #open} the pipeline replays its log, then every operation record above
 * {@link GcBookkeeper#lastAppliedOp()} is re-driven: commits rebuild their delta from the map,
 * pins/unpins/raises rescan their snapshot. Before snapshots are deleted the log is made durable,
 * so a re-driven operation always finds its snapshot. Operation records at or below the durable
 * mark are trimmed after each cycle.
 *
 * <h2>Cycle ({@link #runCycle})</h2>
 * For each volume: plan retention; release keep-last pins of snapshots that left the window (while
 * they still exist), place pins for those that need them; make the log durable; delete expired
 * snapshots and the map entries no retained snapshot needs. Then sweep with the same {@code now}.
 * Then, outside the cycle lock (so holds and deletions are not kept waiting), compact the sealed
 * data logs whose live share fell below {@link Settings#compactionThreshold()} ({@link Compactor},
 * online; safe against a concurrent sweep because the store re-checks every location it moves).
 */
public final class GcService implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GcService.class.getName());

    /**
     * Settings. {@code dir}: the GC directory (GMA, log, checkpoint). {@code compactionThreshold}:
     * sealed logs whose live share is below it are rewritten after each sweep (0 turns compaction
     * off); {@code compactionMaxBytes}: live bytes one run copies at most (at least one log is taken).
     */
    public record Settings(Path dir, BoscSettings bosc, Duration grace, String defaultPolicy, int sweepBatchChunks,
                           double compactionThreshold, long compactionMaxBytes) {
        public Settings {
            RetentionPolicy.parse(defaultPolicy);
            if (!(compactionThreshold >= 0 && compactionThreshold <= 1)) {
                throw new IllegalArgumentException("compaction threshold must be in 0..1, got " + compactionThreshold);
            }
            if (compactionMaxBytes <= 0) {
                throw new IllegalArgumentException("compaction max bytes must be positive, got " + compactionMaxBytes);
            }
        }

        /** Compaction at the default threshold, no bound on the bytes copied. */
        public Settings(Path dir, BoscSettings bosc, Duration grace, String defaultPolicy, int sweepBatchChunks) {
            this(dir, bosc, grace, defaultPolicy, sweepBatchChunks, Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
        }
    }

    /** What one cycle did; {@code compaction} is null if it was off. */
    public record CycleReport(long now, int snapshotsDeleted, long mapEntriesPruned, int pinsPlaced, int pinsReleased,
                              SweepReport sweep, CompactionReport compaction) {
    }

    /** What one cycle's compaction did, for the run report and status. */
    public record CompactionReport(int logsExamined, int logsRewritten, int logsDeleted, int logsDeferred,
                                   int logsSkippedCorrupt, long recordsMoved, long bytesCopied, long bytesReclaimed,
                                   double seconds) {
        static CompactionReport of(Compactor.Result r) {
            return new CompactionReport(r.logsExamined(), r.logsRewritten(), r.logsDeleted(), r.logsDeferred(),
                    r.logsSkippedCorrupt(), r.recordsMoved(), r.bytesCopied(), r.bytesReclaimed(), r.nanos() / 1e9);
        }
    }

    /** Compaction since the server started: for counters. */
    public record CompactionTotals(long runs, long logsRewritten, long logsDeleted, long bytesCopied, long bytesReclaimed,
                                   double seconds) {
    }

    private final Settings settings;
    private final Catalog catalog;
    private final DataStore dataStore;
    private final GcRecords records;
    private final Clock clock;
    private final java.util.function.Supplier<Object> commitMonitor;
    private final BoscPipeline pipeline;
    private final GcBookkeeper bookkeeper;
    private final GraceGuard guard;
    private final Sweeper sweeper;
    private final StoreReclaimer reclaimer;
    private final Compactor compactor;
    private final RetentionLocks locks;
    private final AtomicLong compactionRuns = new AtomicLong();
    private final AtomicLong compactedLogs = new AtomicLong();
    private final AtomicLong droppedLogs = new AtomicLong();
    private final AtomicLong compactionCopied = new AtomicLong();
    private final AtomicLong compactionReclaimed = new AtomicLong();
    private final AtomicLong compactionNanos = new AtomicLong();
    private final ExpiryCalculator calc = new ExpiryCalculator();
    private final RetentionPlanner planner = new RetentionPlanner();
    private final Map<Long, VolumeGc> volumes = new HashMap<>();
    private final Object cycleLock = new Object();
    private long nextOpId;
    private volatile CycleReport lastCycle;
    /** Test seam: 1 = die after a volume deletion's catalog batch, 2 = after its GC log is durable. */
    volatile int crashPoint;
    /** Set when an operation could not be logged: no later one may be, until a restart re-drives them in order. */
    private volatile RuntimeException failure;

    /** In-memory GC state of one volume, loaded on first use. */
    private static final class VolumeGc {
        RetentionPolicy policy;
        final RangeMaxExpiry expiries = new RangeMaxExpiry();
        final List<Long> history = new ArrayList<>();
    }

    private GcService(Settings settings, Catalog catalog, DataStore dataStore, FingerprintIndex index, Clock clock,
                      java.util.function.Supplier<Object> commitMonitor) {
        this.settings = settings;
        this.catalog = catalog;
        this.dataStore = dataStore;
        this.records = new GcRecords(catalog.db());
        this.clock = clock;
        this.commitMonitor = commitMonitor;
        this.pipeline = BoscPipeline.open(settings.dir(), settings.bosc());
        this.bookkeeper = new GcBookkeeper(pipeline);
        this.guard = new GraceGuard(pipeline, clock, settings.grace(), Duration.ofMinutes(10));
        this.reclaimer = new StoreReclaimer(dataStore, index, catalog.db());
        this.sweeper = new Sweeper(pipeline, guard, reclaimer, settings.sweepBatchChunks());
        this.compactor = new Compactor(dataStore);
        this.locks = new RetentionLocks(this, catalog, records, clock, commitMonitor);
        this.nextOpId = catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1);
    }

    /**
     * Opens the GC directory, replays its log and re-drives the operations the log lacks. Call it
     * before the ingest accepts sessions. {@code commitMonitor} supplies the object commits synchronise
     * on (the {@code SnapshotCommit}); it is asked for lazily, because that object needs this one.
     */
    public static GcService open(Settings settings, Catalog catalog, DataStore dataStore, FingerprintIndex index,
                                 Clock clock, java.util.function.Supplier<Object> commitMonitor) {
        GcService s = new GcService(settings, catalog, dataStore, index, clock, commitMonitor);
        try {
            if (s.pipeline.openedEmpty() && catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1) > 1) {
                // the catalog has counted operations that this (new, empty) GC directory never saw:
                // counting on from zero would leave referenced blocks uncounted
                s.pipeline.close();
                // opening wrote a checkpoint into the empty directory: without this, the next start
                // would no longer see it as empty and would count from zero
                deleteCheckpoint(settings.dir());
                throw new IllegalStateException("GC directory " + settings.dir() + " is empty but the catalog has "
                        + "GC history: the GC metadata was lost; restore the directory, or rebuild it from the catalog with the "
                        + "server stopped: holdfast-server gc-rebuild --data-dir " + settings.dir().toAbsolutePath().getParent());
            }
            s.redrive();
            s.finishVolumeDeletions();
            s.reprotectRecentBlocks();
        } catch (RuntimeException e) {
            s.pipeline.close();
            throw e;
        }
        return s;
    }

    private static void deleteCheckpoint(Path gcDir) {
        try {
            java.nio.file.Files.deleteIfExists(gcDir.resolve("checkpoint"));
        } catch (java.io.IOException e) {
            throw new org.holdfast.gc.GcStoreException("gc", gcDir, "checkpoint", "cannot delete: " + e.getMessage(), e);
        }
    }

    private void redrive() {
        // no commit can run yet: the ingest starts after this service is open
        synchronized (this) {
            Map<Long, VolumeRecord> byId = new HashMap<>();
            for (VolumeRecord v : catalog.volumes()) {
                byId.put(v.internalId(), v);
            }
            for (GcRecords.Op op : records.opsAfter(bookkeeper.lastAppliedOp())) {
                VolumeRecord v = byId.get(op.volume());
                if (v == null) {
                    throw new IllegalStateException("GC operation " + op.id() + " names unknown volume " + op.volume());
                }
                bookkeeper.apply(op.id(), operationOf(op, v));
                nextOpId = Math.max(nextOpId, op.id() + 1);
            }
        }
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
        try (WriteBatch batch = new WriteBatch()) {
            catalog.db().putMetaLong(batch, GcRecords.PROTECT_SCAN_FROM, to);
            catalog.write(batch);
        }
    }

    private GcOperation operationOf(GcRecords.Op op, VolumeRecord v) {
        switch (op.kind()) {
            case GcRecords.KIND_COMMIT -> {
                SnapshotDelta d = SnapshotScan.delta(catalog, v.internalId(), op.sequence());
                return new GcOperation.Commit(v.name(), op.sequence(), d.asList(), state(v).expiries);
            }
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

    private VolumeGc state(VolumeRecord v) {
        synchronized (volumes) {
            VolumeGc g = volumes.get(v.internalId());
            if (g != null) {
                return g;
            }
            g = new VolumeGc();
            String p = records.policy(v.internalId());
            g.policy = RetentionPolicy.parse(p == null ? settings.defaultPolicy() : p);
            Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
            for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                gc.put(s.sequence(), s);
            }
            for (SnapshotRecord s : catalog.snapshots(v)) {
                GcRecords.SnapshotGc sg = gc.get(s.sequence());
                // a snapshot from before GC records existed never expires by itself: safe
                g.expiries.append(s.sequence(), sg == null ? Long.MAX_VALUE : sg.expiry());
                g.history.add(s.createdAtMillis());
            }
            volumes.put(v.internalId(), g);
            return g;
        }
    }

    // ------------------------------------------------------------------ commit hook

    /**
     * Inside the commit: fix the snapshot's expiry and record the operation in the same batch; the
     * answer logs the bookkeeping once the batch is durable.
     */
    CommitHook.AfterCommit onCommit(CommittedSnapshot c, WriteBatch batch) {
        VolumeGc g = state(c.volume());
        SnapshotRecord s = c.snapshot();
        long expiry = calc.expiryOf(g.policy, s.createdAtMillis(), g.history);
        long opId = nextOpId;
        records.putOp(batch, new GcRecords.Op(opId, GcRecords.KIND_COMMIT, c.volume().internalId(), s.sequence(), 0));
        records.putSnapshot(batch, c.volume().internalId(), new GcRecords.SnapshotGc(s.sequence(), expiry, 0));
        catalog.db().putMetaLong(batch, GcRecords.NEXT_OP_ID, opId + 1);
        return () -> afterCommit(c, opId, expiry);
    }

    /** After the commit is durable: log the bookkeeping. */
    private void afterCommit(CommittedSnapshot c, long opId, long expiry) {
        VolumeGc g = state(c.volume());
        nextOpId = opId + 1;
        apply(opId, new GcOperation.Commit(c.volume().name(), c.snapshot().sequence(), c.delta().asList(), g.expiries));
        if (g.expiries.lastSequence() < c.snapshot().sequence()) {
            g.expiries.append(c.snapshot().sequence(), expiry);
            g.history.add(c.snapshot().createdAtMillis());
        }
    }

    /**
     * Logs an operation whose record is already durable in the catalog. After a failure nothing more
     * is logged (a later id would hide the failed one from the re-drive); the records wait in the
     * catalog and the next start re-drives them in order. Never throws: the catalog change stands.
     */
    private void apply(long opId, GcOperation op) {
        if (failure != null) {
            return;
        }
        try {
            bookkeeper.apply(opId, op);
        } catch (RuntimeException e) {
            failure = e;
            LOG.log(System.Logger.Level.ERROR, "GC operation " + opId + " could not be logged; GC is stopped"
                    + " until a restart re-drives it", e);
        }
    }

    /** The failure that stopped GC bookkeeping, or null. */
    public RuntimeException failure() {
        return failure;
    }

    // ------------------------------------------------------------------ holds and policies

    /** Retention locks and holds: placing, releasing, and the refusals they cause. */
    public RetentionLocks locks() {
        return locks;
    }

    /** Places a hold (a governance lock without date): the snapshot is kept until it is released. */
    public void placeHold(VolumeId volume, long sequence) {
        locks.place(volume, sequence, RetentionLocks.Mode.GOVERNANCE, null, "local");
    }

    /** Releases a hold or governance lock; refused for a compliance lock before its date. */
    public void releaseHold(VolumeId volume, long sequence) {
        locks.release(volume, sequence);
    }

    /** True if the snapshot is under a hold or lock (not counting keep-last pins). */
    public boolean held(VolumeId volume, long sequence) {
        return locks.lock(volume, sequence).isPresent();
    }

    /** The snapshot's fixed expiry (epoch ms), if known. */
    public Optional<Long> expiry(VolumeId volume, long sequence) {
        return gcOf(catalog.requireVolume(volume), sequence).map(GcRecords.SnapshotGc::expiry);
    }

    private Optional<GcRecords.SnapshotGc> gcOf(VolumeRecord v, long seq) {
        return records.snapshots(v.internalId()).stream().filter(s -> s.sequence() == seq).findFirst();
    }

    /** Sets or clears a pinning flag with its GC operation; {@code also} adds to the same batch. */
    boolean changeFlags(VolumeId volume, long sequence, int flag, boolean on, java.util.function.Consumer<WriteBatch> also) {
        synchronized (commitMonitor.get()) {
            VolumeRecord v = catalog.requireVolume(volume);
            SnapshotRecord s = catalog.snapshot(v, sequence)
                    .orElseThrow(() -> new UnknownSnapshotException(volume.name(), sequence));
            GcRecords.SnapshotGc sg = gcOf(v, sequence)
                    .orElse(new GcRecords.SnapshotGc(sequence, Long.MAX_VALUE, 0));
            boolean has = (sg.flags() & flag) != 0;
            if (has == on) {
                return false;
            }
            long opId = nextOpId;
            int flags = on ? sg.flags() | flag : sg.flags() & ~flag;
            try (WriteBatch batch = new WriteBatch()) {
                records.putOp(batch, new GcRecords.Op(opId, on ? GcRecords.KIND_PIN : GcRecords.KIND_UNPIN,
                        v.internalId(), sequence, 0));
                records.putSnapshot(batch, v.internalId(), new GcRecords.SnapshotGc(sequence, sg.expiry(), flags));
                catalog.db().putMetaLong(batch, GcRecords.NEXT_OP_ID, opId + 1);
                also.accept(batch);
                catalog.write(batch);
            }
            nextOpId = opId + 1;
            long[] pbns = SnapshotScan.pbns(catalog, v.internalId(), sequence, s.blockCount());
            apply(opId, on ? new GcOperation.Pin(pbns) : new GcOperation.Unpin(pbns));
            return true;
        }
    }

    /**
     * Sets a volume's retention policy. New snapshots follow it; existing snapshots whose expiry it
     * extends are extended (one scan each); shorter expiries are not applied to existing snapshots.
     */
    public void setPolicy(VolumeId volume, String policyText) {
        RetentionPolicy policy = RetentionPolicy.parse(policyText);
        synchronized (commitMonitor.get()) {
            VolumeRecord v = catalog.requireVolume(volume);
            VolumeGc g = state(v);
            locks.checkPolicyChange(v, g.policy, policy);
            try (WriteBatch batch = new WriteBatch()) {
                records.putPolicy(batch, v.internalId(), policy.toString());
                catalog.write(batch);
            }
            g.policy = policy;
            List<Long> earlier = new ArrayList<>();
            Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
            for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                gc.put(s.sequence(), s);
            }
            for (SnapshotRecord s : catalog.snapshots(v)) {
                long e = calc.expiryOf(policy, s.createdAtMillis(), earlier);
                earlier.add(s.createdAtMillis());
                GcRecords.SnapshotGc sg = gc.get(s.sequence());
                if (sg == null || e <= sg.expiry()) {
                    continue;
                }
                long opId = nextOpId;
                try (WriteBatch batch = new WriteBatch()) {
                    records.putOp(batch, new GcRecords.Op(opId, GcRecords.KIND_RAISE, v.internalId(), s.sequence(), e));
                    records.putSnapshot(batch, v.internalId(), new GcRecords.SnapshotGc(s.sequence(), e, sg.flags()));
                    catalog.db().putMetaLong(batch, GcRecords.NEXT_OP_ID, opId + 1);
                    catalog.write(batch);
                }
                nextOpId = opId + 1;
                g.expiries.setExpiry(s.sequence(), e);
                apply(opId, new GcOperation.RaiseExpiry(
                        SnapshotScan.pbns(catalog, v.internalId(), s.sequence(), s.blockCount()), e));
            }
        }
    }

    /** What deleting a volume did. */
    public record VolumeDeletion(String volume, int snapshotsDeleted, long blocksReleased, long mapEntriesDeleted) {
    }

    /**
     * Deletes a volume at an operator's request: every snapshot, every map entry and the volume
     * itself. Refused (nothing changes) while a backup of it is in progress or any snapshot is held.
     *
     * <p>GC rule: RC counts the volumes' newest states, so the newest state's PBNs each get RC − 1
     * (operation {@code KIND_DELETE_VOLUME}, one id, same crash protocol as a commit). ETs are not
     * touched: an ET cannot be lowered safely (other volumes' dereferences may have raised it), and
     * raising it would only delay reclaim. So a block only this volume needed is reclaimable as soon
     * as its RC is 0 and its ET (from earlier dereferences, or a backup's grace) has passed; blocks
     * that only the volume's older snapshots needed keep the ET those snapshots' expiries gave them,
     * as with an early snapshot deletion; blocks other volumes map keep RC > 0.
     *
     * <p>Steps: (1) one synced batch records the operation (with the newest sequence and its block
     * count) and deletes the snapshot records and GC records, so nothing can restore from it; (2)
     * the operation is logged and made durable; (3) the map entries go in batches, then the volume
     * record and the operation record in one last batch. A crash before (2) is re-driven at start
     * from the map, which is still there; a crash during (3) is finished at start
     * ({@link #finishVolumeDeletions}). Cost: O(volume) (one scan of the newest state, one pass over
     * the map).
     */
    public VolumeDeletion deleteVolume(VolumeId volume, VolumeGate gate) {
        requireHealthy();
        synchronized (cycleLock) {
            catalog.requireVolume(volume);
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
                            changeFlags(volume, sg.sequence(), GcRecords.KEEP_LAST_PINNED, false, b -> { });
                        }
                    }
                    List<SnapshotRecord> snaps = catalog.snapshots(v);
                    snapshots = snaps.size();
                    long newest = snaps.isEmpty() ? 0 : snaps.get(snaps.size() - 1).sequence();
                    long blockCount = snaps.isEmpty() ? 0 : snaps.get(snaps.size() - 1).blockCount();
                    long[] pbns = newest == 0 ? new long[0] : SnapshotScan.pbns(catalog, v.internalId(), newest, blockCount);
                    released = pbns.length;
                    opId = nextOpId;
                    try (WriteBatch batch = new WriteBatch()) {
                        records.putOp(batch, new GcRecords.Op(opId, GcRecords.KIND_DELETE_VOLUME, v.internalId(), newest, blockCount));
                        for (SnapshotRecord s : snaps) {
                            catalog.deleteSnapshot(batch, v, s.sequence());
                        }
                        for (GcRecords.SnapshotGc sg : gcs) {
                            records.deleteSnapshot(batch, v.internalId(), sg.sequence());
                        }
                        records.deletePolicy(batch, v.internalId());
                        catalog.db().putMetaLong(batch, GcRecords.NEXT_OP_ID, opId + 1);
                        catalog.write(batch);
                    }
                    keepClosed = true;
                    nextOpId = opId + 1;
                    if (crashPoint == 1) {
                        throw new SimulatedCrash();
                    }
                    synchronized (volumes) {
                        volumes.remove(v.internalId());
                    }
                    apply(opId, new GcOperation.Release(pbns));
                }
                pipeline.awaitDurable();
                requireHealthy(); // the op must be in the GC log before the map it is rebuilt from goes
                if (crashPoint == 2) {
                    throw new SimulatedCrash();
                }
                long entries = deleteMapAndVolume(v, opId);
                keepClosed = false;
                return new VolumeDeletion(volume.name(), snapshots, released, entries);
            } finally {
                if (!keepClosed) {
                    gate.release(volume.name());
                }
            }
        }
    }

    /** Completes volume deletions a crash interrupted after their operation was logged. */
    private void finishVolumeDeletions() {
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
        WriteBatch[] batch = {new WriteBatch()};
        try {
            catalog.forEachMapEntry(v.internalId(), (lbn, birth, pbn) -> {
                catalog.deleteMapEntry(batch[0], v.internalId(), lbn, birth);
                n[0]++;
                if (++n[1] == 10_000) {
                    catalog.write(batch[0]);
                    batch[0].close();
                    batch[0] = new WriteBatch();
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

    /**
     * Deletes one snapshot before its expiry. Refused for a held snapshot and for the newest one (it
     * is the volume's current state: delete the volume instead). No GC operation is needed: the
     * blocks it alone needed were dereferenced with an ET at least its expiry, which cannot be
     * lowered safely, so they come back at the latest when it would have expired; the map entries
     * only it read are pruned at once.
     */
    public void deleteSnapshot(VolumeId volume, long sequence) {
        requireHealthy();
        synchronized (cycleLock) {
            VolumeRecord v = catalog.requireVolume(volume);
            catalog.snapshot(v, sequence).orElseThrow(() -> new UnknownSnapshotException(volume.name(), sequence));
            // loaded before the snapshot record goes: a first load after it would not know the sequence
            VolumeGc g = state(v);
            GcRecords.SnapshotGc sg = gcOf(v, sequence).orElse(null);
            if (sg != null && sg.held()) {
                throw locks.refusal(v, sequence, "the snapshot cannot be deleted");
            }
            if (sequence == v.latestSequence()) {
                throw new GcConflictException("snapshot " + volume.name() + "@" + sequence + " is the newest one (the volume's current "
                        + "state) and cannot be deleted alone; delete the volume instead");
            }
            if (sg != null && sg.keepLastPinned()) {
                changeFlags(volume, sequence, GcRecords.KEEP_LAST_PINNED, false, b -> { });
            }
            pipeline.awaitDurable(); // every operation naming it is in the GC log before it goes
            synchronized (commitMonitor.get()) {
                GcRecords.SnapshotGc now = gcOf(v, sequence).orElse(null);
                if (now != null && now.held()) {
                    throw locks.refusal(v, sequence, "the snapshot cannot be deleted");
                }
                try (WriteBatch batch = new WriteBatch()) {
                    catalog.deleteSnapshot(batch, v, sequence);
                    records.deleteSnapshot(batch, v.internalId(), sequence);
                    catalog.write(batch);
                }
                g.expiries.remove(sequence);
            }
            MapPruner.prune(catalog, v);
        }
    }

    /** Thrown at a {@link #crashPoint}; the test then abandons the service as a crash would. */
    static final class SimulatedCrash extends RuntimeException {
    }

    private void requireHealthy() {
        if (failure != null) {
            throw new IllegalStateException("GC bookkeeping stopped after a failure; restart the server to recover: "
                    + failure.getMessage(), failure);
        }
    }

    /** The volume's policy as text. */
    public String policy(VolumeId volume) {
        return state(catalog.requireVolume(volume)).policy.toString();
    }

    // ------------------------------------------------------------------ cycle

    /** Runs retention, a sweep and compaction at the current time. */
    public CycleReport runCycle() {
        return runCycle(clock.millis());
    }

    /** Runs retention, a sweep and compaction as of {@code now} (tests pass a simulated time). */
    public CycleReport runCycle(long now) {
        CycleReport swept = retainAndSweep(now);
        CompactionReport c = compact();
        CycleReport r = new CycleReport(swept.now(), swept.snapshotsDeleted(), swept.mapEntriesPruned(), swept.pinsPlaced(),
                swept.pinsReleased(), swept.sweep(), c);
        lastCycle = r;
        return r;
    }

    /**
     * Compacts the sealed data logs below the threshold now (also the last step of every cycle);
     * null if compaction is off. Safe while backups append, restores read and a sweep frees blocks.
     */
    public CompactionReport compact() {
        if (settings.compactionThreshold() <= 0) {
            return null;
        }
        Compactor.Result r = compactor.run(settings.compactionThreshold(), settings.compactionMaxBytes());
        compactionRuns.incrementAndGet();
        compactedLogs.addAndGet(r.logsRewritten());
        droppedLogs.addAndGet(r.logsDeleted());
        compactionCopied.addAndGet(r.bytesCopied());
        compactionReclaimed.addAndGet(r.bytesReclaimed());
        compactionNanos.addAndGet(r.nanos());
        if (r.logsRewritten() + r.logsDeleted() + r.logsSkippedCorrupt() > 0) {
            LOG.log(System.Logger.Level.INFO, () -> String.format("gc compaction: %d logs rewritten, %d deleted, %d deferred,"
                    + " %d skipped (damaged), %d bytes copied, %d bytes reclaimed in %.3f s", r.logsRewritten(), r.logsDeleted(),
                    r.logsDeferred(), r.logsSkippedCorrupt(), r.bytesCopied(), r.bytesReclaimed(), r.nanos() / 1e9));
        }
        return CompactionReport.of(r);
    }

    /** Compaction since this service opened. */
    public CompactionTotals compactionTotals() {
        return new CompactionTotals(compactionRuns.get(), compactedLogs.get(), droppedLogs.get(), compactionCopied.get(),
                compactionReclaimed.get(), compactionNanos.get() / 1e9);
    }

    private CycleReport retainAndSweep(long now) {
        requireHealthy();
        synchronized (cycleLock) {
            locks.lapse(now); // a lapsed lock's snapshot expires in this same cycle
            int deleted = 0;
            long pruned = 0;
            int pinned = 0;
            int released = 0;
            for (VolumeRecord v : catalog.volumes()) {
                VolumeGc g = state(v);
                List<GcRecords.SnapshotGc> gcs = records.snapshots(v.internalId());
                Map<Long, GcRecords.SnapshotGc> gc = new HashMap<>();
                for (GcRecords.SnapshotGc s : gcs) {
                    gc.put(s.sequence(), s);
                }
                List<RetentionPlanner.SnapshotState> states = new ArrayList<>();
                for (SnapshotRecord s : catalog.snapshots(v)) {
                    GcRecords.SnapshotGc sg = gc.getOrDefault(s.sequence(), new GcRecords.SnapshotGc(s.sequence(), Long.MAX_VALUE, 0));
                    states.add(new RetentionPlanner.SnapshotState(s.sequence(), sg.expiry(), sg.held(), sg.keepLastPinned()));
                }
                RetentionPlanner.Plan plan = planner.plan(states, g.policy.keepLast(), now);
                for (long seq : plan.releaseKeepLastPin()) {
                    released += changeFlags(v.name(), seq, GcRecords.KEEP_LAST_PINNED, false, b -> { }) ? 1 : 0;
                }
                for (long seq : plan.pinForKeepLast()) {
                    pinned += changeFlags(v.name(), seq, GcRecords.KEEP_LAST_PINNED, true, b -> { }) ? 1 : 0;
                }
                if (plan.delete().isEmpty()) {
                    continue;
                }
                // every operation naming these snapshots must be in the GC log before they go
                pipeline.awaitDurable();
                List<Long> gone = new ArrayList<>();
                synchronized (commitMonitor.get()) {
                    Map<Long, GcRecords.SnapshotGc> now2 = new HashMap<>();
                    for (GcRecords.SnapshotGc s : records.snapshots(v.internalId())) {
                        now2.put(s.sequence(), s);
                    }
                    try (WriteBatch batch = new WriteBatch()) {
                        for (long seq : plan.delete()) {
                            GcRecords.SnapshotGc sg = now2.get(seq);
                            if (sg != null && (sg.held() || sg.keepLastPinned())) {
                                continue; // a hold arrived after the plan was made
                            }
                            catalog.deleteSnapshot(batch, v, seq);
                            records.deleteSnapshot(batch, v.internalId(), seq);
                            gone.add(seq);
                        }
                        catalog.write(batch);
                    }
                    // RangeMaxExpiry is read by commits, which hold this monitor
                    for (long seq : gone) {
                        g.expiries.remove(seq);
                    }
                }
                deleted += gone.size();
                locks.expired(v, gone, now);
                pruned += MapPruner.prune(catalog, v);
            }
            // ids appended before the barrier are durable after it; later ones must stay
            long durableOp = bookkeeper.lastAppliedOp();
            pipeline.awaitDurable();
            trimOps(durableOp);
            SweepReport sweep = sweeper.sweep(guard.sweepHorizon(now)); // open backups keep their protection
            return new CycleReport(now, deleted, pruned, pinned, released, sweep, null);
        }
    }

    private void trimOps(long durable) {
        List<Long> ids = records.opIdsUpTo(durable);
        if (ids.isEmpty()) {
            return;
        }
        try (WriteBatch batch = new WriteBatch()) {
            for (long id : ids) {
                records.deleteOp(batch, id);
            }
            catalog.write(batch);
        }
    }

    /** The independent check, as of {@code now}. */
    public FsckReport fsck(long now) {
        CatalogFsck adapter = new CatalogFsck(catalog, dataStore, records);
        return new Fsck(adapter, adapter, pipeline).run(now);
    }

    public FsckReport fsck() {
        return fsck(clock.millis());
    }

    public GraceGuard guard() {
        return guard;
    }

    public BoscPipeline pipeline() {
        return pipeline;
    }

    public long lastAppliedOp() {
        return bookkeeper.lastAppliedOp();
    }

    public CycleReport lastCycle() {
        return lastCycle;
    }

    /** Simulated crash (tests): the GC stops without flushing its log buffer or checkpointing. */
    void abandon() {
        pipeline.abandon();
    }

    /** Orderly shutdown: commits every queued GMA update. Call before the metadata database closes. */
    @Override
    public void close() {
        if (failure == null) {
            sweeper.saveSkipTable(); // so the first sweep after the next start need not read every GMA chunk
        }
        pipeline.close();
    }
}
