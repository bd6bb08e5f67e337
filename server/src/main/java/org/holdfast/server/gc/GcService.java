package org.holdfast.server.gc;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;
import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.check.Fsck;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.gc.retention.RetentionExplainer;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.gc.sweep.SweepReport;
import org.holdfast.gc.sweep.Sweeper;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.catalog.PolicyStore;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.CompactionThreshold;
import org.holdfast.server.store.Compactor;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataBatch;

/**
 * The server's garbage collector: hybrid bookkeeping driven by commits, retention, holds, sweeps
 * and fsck, over the gc-engine. This class opens and wires the parts and is the one entry point the
 * REST layer, the scheduler and the tools use; each job is a class of its own:
 * <ul>
 * <li>{@link GcCommitHook}: the commit operation, in the commit's batch and after it;</li>
 * <li>{@link OperationLog}: operation ids, records, logging, the failure that stops it;</li>
 * <li>{@link CrashRecovery}: at {@link #open}, re-drive what the GC log lacks;</li>
 * <li>{@link Pins} and {@link RetentionLocks}: keep-last pins, holds and locks;</li>
 * <li>{@link RetentionPolicies}: each volume's policy; {@link VolumeStates}: its in-memory state;</li>
 * <li>{@link NamedPolicies}: policies as named resources, and which volumes follow them;</li>
 * <li>{@link Deletions}: volume and snapshot deletion at an operator's request;</li>
 * <li>{@link RetentionCycle}: retention, sweep, then {@link CompactionCounters}.</li>
 * <li>{@link ReclaimNow}: on request, an {@link ExactMark} and a sweep of what it left unmarked.</li>
 * </ul>
 *
 * <h2>Operations and crash atomicity</h2>
 * Every GC operation (commit, pin, unpin, raise, volume deletion) gets an id from
 * {@code gc.next-op-id} and a record {@code gc/o<id>} written in the same synced catalog batch as the
 * change it accounts for; only after that batch is durable is it handed to
 * {@link GcBookkeeper#apply}. All of this happens under the commit monitor (the
 * {@code SnapshotCommit} object), so ids reach the bookkeeper in order. At {@link #open} the
 * pipeline replays its log, then every operation record above {@link GcBookkeeper#lastAppliedOp()}
 * is re-driven. Before snapshots are deleted the log is made durable, so a re-driven operation
 * always finds its snapshot. Operation records at or below the durable mark are trimmed after each
 * cycle.
 *
 * <p>On a master whose blocks live on workers ({@code holdfast.cluster.data=workers}), opened with a
 * {@link GcRouting}, each operation is handed to {@link RoutedBookkeeping} instead: the workers'
 * shares go to the outbox first, then the master's own share into this log as the operation's group.
 *
 * <h2>Locks</h2>
 * Always taken in this order, each optional: the cycle lock (one object, held by
 * {@link RetentionCycle} up to the sweep, by {@link Deletions} and by {@link ReclaimNow} up to its compaction), the {@link VolumeGate} (volume
 * deletion), the commit monitor (commits, pins, locks, policy changes, and the catalog batches of
 * deletions), the monitor of {@link VolumeStates}' map (innermost). Compaction holds none of them.
 */
public final class GcService implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GcService.class.getName());

    /**
     * Settings. {@code dir}: the GC directory (GMA, log, checkpoint). {@code compactionThreshold}:
     * sealed logs whose live share is below it are rewritten after each sweep (0 turns compaction
     * off, reclaim-now's included); {@code compactionMaxBytes}: live bytes one run copies at most (at
     * least one log is taken); {@code reclaimCompactionThreshold}: the same share for the compaction
     * that ends reclaim-now, which takes the higher of the two (an operator asking for space now).
     */
    public record Settings(Path dir, BoscSettings bosc, Duration grace, String defaultPolicy, int sweepBatchChunks,
                           double compactionThreshold, long compactionMaxBytes, double reclaimCompactionThreshold) {
        public Settings {
            RetentionPolicy.parse(defaultPolicy);
            checkThreshold("compaction threshold", compactionThreshold);
            checkThreshold("reclaim compaction threshold", reclaimCompactionThreshold);
            if (compactionMaxBytes <= 0) {
                throw new IllegalArgumentException("compaction max bytes must be positive, got " + compactionMaxBytes);
            }
        }

        /** As above, reclaim-now at {@link Compactor#DEFAULT_RECLAIM_THRESHOLD}. */
        public Settings(Path dir, BoscSettings bosc, Duration grace, String defaultPolicy, int sweepBatchChunks,
                        double compactionThreshold, long compactionMaxBytes) {
            this(dir, bosc, grace, defaultPolicy, sweepBatchChunks, compactionThreshold, compactionMaxBytes,
                    Compactor.DEFAULT_RECLAIM_THRESHOLD);
        }

        /** Compaction at the default thresholds, no bound on the bytes copied. */
        public Settings(Path dir, BoscSettings bosc, Duration grace, String defaultPolicy, int sweepBatchChunks) {
            this(dir, bosc, grace, defaultPolicy, sweepBatchChunks, Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
        }

        private static void checkThreshold(String what, double share) {
            CompactionThreshold.check(share, t -> what + " must be in 0..1, got " + t);
        }
    }

    /** What one cycle did; {@code compaction} is null if it was off. */
    public record CycleReport(long now, int snapshotsDeleted, long mapEntriesPruned, int pinsPlaced, int pinsReleased,
                              SweepReport sweep, CompactionReport compaction) {
    }

    /**
     * What one compaction did, for the run report and status: {@code threshold} is the live share
     * below which it rewrote a log; {@code bytesDeferred} the live bytes of the logs it deferred
     * (what their rewrite would copy, and so needs free above the GC floor); {@code logsTrimmed}
     * deferred logs whose dead tail it cut off without a copy.
     */
    public record CompactionReport(int logsExamined, int logsRewritten, int logsDeleted, int logsDeferred,
                                   int logsSkippedCorrupt, long recordsMoved, long bytesCopied, long bytesReclaimed,
                                   double seconds, double threshold, long bytesDeferred, int logsTrimmed) {
        static CompactionReport of(Compactor.Result r, double threshold) {
            return new CompactionReport(r.logsExamined(), r.logsRewritten(), r.logsDeleted(), r.logsDeferred(),
                    r.logsSkippedCorrupt(), r.recordsMoved(), r.bytesCopied(), r.bytesReclaimed(), r.nanos() / 1e9,
                    threshold, r.bytesDeferred(), r.logsTrimmed());
        }
    }

    /** Compaction since the server started: for counters. */
    public record CompactionTotals(long runs, long logsRewritten, long logsDeleted, long bytesCopied, long bytesReclaimed,
                                   double seconds) {
    }

    /**
     * What reclaim-now did: snapshots its exact mark read, blocks it found live, blocks and bytes
     * (as stored, compressed) it freed, how long it took; the allocated blocks it examined, those it
     * kept because a backup in progress uses them, and the compaction that followed (null if off).
     */
    public record ReclaimReport(long snapshotsMarked, long blocksMarked, long blocksFreed, long bytesFreed,
                                long durationMillis, long blocksExamined, long blocksKeptForBackups,
                                CompactionReport compaction) {
    }

    /** What deleting a volume did. */
    public record VolumeDeletion(String volume, int snapshotsDeleted, long blocksReleased, long mapEntriesDeleted) {
    }

    private final Catalog catalog;
    private final DataStore dataStore;
    private final GcRecords records;
    private final Clock clock;
    private final BoscPipeline pipeline;
    private final GcBookkeeper bookkeeper;
    private final GcBookkeeping bookkeeping;
    private final GraceGuard guard;
    private final Sweeper sweeper;
    private final OperationLog ops;
    private final VolumeStates states;
    private final RetentionLocks locks;
    private final RetentionPolicies policies;
    private final NamedPolicies namedPolicies;
    private final Deletions deletions;
    private final CompactionCounters compaction;
    private final double compactionThreshold;
    private final RetentionCycle cycle;
    private final CrashRecovery recovery;
    private final ReclaimNow reclaimNow;

    private GcService(Settings settings, Catalog catalog, DataStore dataStore, FingerprintIndex index, Clock clock,
                      Supplier<Object> commitMonitor, GcRouting routing) {
        this.catalog = catalog;
        this.dataStore = dataStore;
        this.records = new GcRecords(catalog.db());
        this.clock = clock;
        this.compactionThreshold = settings.compactionThreshold();
        // the GC metadata covers the store's PBN range (a standalone store's: every PBN from 1)
        this.pipeline = BoscPipeline.open(settings.dir(), settings.bosc(), dataStore.range());
        this.bookkeeper = new GcBookkeeper(pipeline);
        this.bookkeeping = routing == null ? GcBookkeeping.local(bookkeeper)
                : new RoutedBookkeeping(pipeline, new GcOutbox(catalog.db()), routing);
        this.guard = new GraceGuard(pipeline, clock, settings.grace(), Duration.ofMinutes(10));
        this.sweeper = new Sweeper(pipeline, guard, new StoreReclaimer(dataStore, index, catalog.db()), settings.sweepBatchChunks());
        this.ops = new OperationLog(catalog, records, bookkeeping);
        this.states = new VolumeStates(catalog, records, settings.defaultPolicy());
        Pins pins = new Pins(catalog, records, ops, commitMonitor);
        this.locks = new RetentionLocks(pins, catalog, records, clock, commitMonitor);
        this.policies = new RetentionPolicies(catalog, records, states, locks, ops, commitMonitor);
        PolicyStore policyStore = new PolicyStore(catalog.db());
        this.namedPolicies = new NamedPolicies(policyStore, catalog, policies, settings.defaultPolicy(),
                clock, commitMonitor);
        Object cycleLock = new Object();
        this.deletions = new Deletions(catalog, records, states, pins, locks, ops, pipeline, cycleLock, commitMonitor, policyStore);
        this.compaction = new CompactionCounters(new Compactor(dataStore), settings.compactionThreshold(),
                settings.reclaimCompactionThreshold(), settings.compactionMaxBytes());
        this.cycle = new RetentionCycle(catalog, records, states, pins, locks, ops, pipeline, bookkeeper, guard, sweeper,
                compaction, cycleLock, commitMonitor);
        this.reclaimNow = new ReclaimNow(catalog, dataStore, records, ops, guard, sweeper, compaction, cycleLock, clock);
        this.recovery = new CrashRecovery(settings.dir(), catalog, dataStore, records, states, ops, pipeline, bookkeeping, guard,
                deletions);
        ops.resumeWith(recovery::redrive, commitMonitor);
    }

    /**
     * Opens the GC directory, replays its log and re-drives the operations the log lacks. Call it
     * before the ingest accepts sessions. {@code commitMonitor} supplies the object commits synchronise
     * on (the {@code SnapshotCommit}); it is asked for lazily, because that object needs this one.
     */
    public static GcService open(Settings settings, Catalog catalog, DataStore dataStore, FingerprintIndex index,
                                 Clock clock, Supplier<Object> commitMonitor) {
        return open(settings, catalog, dataStore, index, clock, commitMonitor, null);
    }

    /**
     * As above; with {@code routing} not null (a master with {@code holdfast.cluster.data=workers})
     * every operation's updates are routed by PBN range to their owners through the outbox
     * ({@link RoutedBookkeeping}), the re-drive at open included; null: the standalone bookkeeping.
     */
    public static GcService open(Settings settings, Catalog catalog, DataStore dataStore, FingerprintIndex index,
                                 Clock clock, Supplier<Object> commitMonitor, GcRouting routing) {
        GcService s = new GcService(settings, catalog, dataStore, index, clock, commitMonitor, routing);
        try {
            verifyGma(s.pipeline, settings.dir());
            s.recovery.recover();
        } catch (RuntimeException e) {
            s.pipeline.close();
            throw e;
        }
        return s;
    }

    /**
     * Reads every GMA chunk once at open: a damaged chunk refuses the start (the operator runs the
     * rebuild) instead of surfacing later as a failed sweep or fsck, with GC counting on bad data.
     */
    private static void verifyGma(BoscPipeline pipeline, Path dir) {
        try {
            pipeline.gma().verify();
        } catch (GcCorruptException e) {
            throw new GcStoreException("gc-metadata", dir, null, "damaged GC metadata found at start: " + e.getMessage()
                    + "; stop the server and rebuild it from the catalog: holdfast-server gc-rebuild --data-dir "
                    + dir.toAbsolutePath().getParent(), e);
        }
    }

    // ------------------------------------------------------------------ parts, for the commit hook

    GcRecords records() {
        return records;
    }

    VolumeStates states() {
        return states;
    }

    OperationLog operations() {
        return ops;
    }

    /** Where operations go: the local GC log, or the master's routing (tests). */
    GcBookkeeping bookkeeping() {
        return bookkeeping;
    }

    /** The failure that stopped GC bookkeeping, or null. */
    public RuntimeException failure() {
        return ops.failure();
    }

    /**
     * Runs {@code then} at once while bookkeeping is healthy, else once it resumed with every waiting
     * operation logged (or routed to the workers' outboxes); never if the server stops first.
     */
    public void whenBookkeepingHealthy(Runnable then) {
        ops.whenHealthy(then);
    }

    /**
     * Why GC updates wait right now (the GC log or a GMA committer cannot write; both retry), or
     * the failure that stopped the GC pipeline for good (a restart replays its log); null if neither.
     */
    public RuntimeException pipelineProblem() {
        RuntimeException f = pipeline.failure();
        return f != null ? f : pipeline.stalled();
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
        return records.snapshot(catalog.requireVolume(volume).internalId(), sequence).map(GcRecords.SnapshotGc::expiry);
    }

    /**
     * Sets a volume's retention policy. New snapshots follow it; existing snapshots whose expiry it
     * extends are extended (one scan each); shorter expiries are not applied to existing snapshots.
     */
    public void setPolicy(VolumeId volume, String policyText) {
        policies.set(volume, policyText);
    }

    /** The volume's policy as text. */
    public String policy(VolumeId volume) {
        return policies.policy(volume);
    }

    /** Named retention policies and the volumes assigned to them. */
    public NamedPolicies namedPolicies() {
        return namedPolicies;
    }

    /**
     * For each retained snapshot of the volume (by sequence, ascending), whether it is kept at {@code now}, by which
     * rule and until when, under {@code policy} ({@code null}: the volume's own; another: what assigning
     * it now would leave, holds and recorded expiries included).
     */
    public java.util.Map<Long, RetentionExplainer.Verdict> explain(VolumeId volume, RetentionPolicy policy, long now) {
        return policies.explain(volume, policy, now);
    }

    // ------------------------------------------------------------------ deletions

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
     * ({@link Deletions#finishInterrupted}). Cost: O(volume) (one scan of the newest state, one pass
     * over the map).
     */
    public VolumeDeletion deleteVolume(VolumeId volume, VolumeGate gate) {
        return deletions.deleteVolume(volume, gate);
    }

    /**
     * Deletes one snapshot before its expiry. Refused for a held snapshot and for the newest one (it
     * is the volume's current state: delete the volume instead). No GC operation is needed: the
     * blocks it alone needed were dereferenced with an ET at least its expiry, which cannot be
     * lowered safely, so they come back at the latest when it would have expired; the map entries
     * only it read are pruned at once.
     */
    public void deleteSnapshot(VolumeId volume, long sequence) {
        deletions.deleteSnapshot(volume, sequence);
    }

    // ------------------------------------------------------------------ cycle

    /**
     * After its own sweep, each cycle asks {@code owners} to sweep the PBN ranges they own (a master
     * whose blocks live on its workers); set once at wiring, before the first cycle.
     */
    public void sweepOwnersWith(RangeOwnerSweeps owners) {
        cycle.sweepOwnersWith(owners);
    }

    /** Runs retention, a sweep and compaction at the current time. */
    public CycleReport runCycle() {
        return runCycle(clock.millis());
    }

    /** Runs retention, a sweep and compaction as of {@code now} (tests pass a simulated time). */
    public CycleReport runCycle(long now) {
        deletions.finishPending();
        return cycle.run(now, JobContext.NONE);
    }

    /** Runs a cycle at the current time as a job: progress per volume and phase, stops at a safe point if cancelled. */
    public CycleReport runCycle(JobContext job) {
        deletions.finishPending();
        return cycle.run(clock.millis(), job);
    }

    /** True while volume {@code internalId}'s deletion waits to complete (a full disk): the API shows it as gone. */
    public boolean deleting(long internalId) {
        return deletions.deleting(internalId);
    }

    /**
     * Compacts the sealed data logs below the threshold now (also the last step of every cycle);
     * null if compaction is off. Safe while backups append, restores read and a sweep frees blocks.
     */
    public CompactionReport compact() {
        return compaction.compact();
    }

    /** Compaction since this service opened. */
    public CompactionTotals compactionTotals() {
        return compaction.totals();
    }

    /** The independent check, as of {@code now}. */
    public FsckReport fsck(long now) {
        return fsck(now, JobContext.NONE);
    }

    /** The independent check as of {@code now} as a job: one item per snapshot marked; it only reads, so it stops anywhere. */
    public FsckReport fsck(long now, JobContext job) {
        CatalogFsck adapter = new CatalogFsck(catalog, dataStore, records);
        if (job != JobContext.NONE) {
            job.total(adapter.retainedSnapshots(), -1);
        }
        return new Fsck(adapter, adapter, pipeline).run(now, new FsckJobProgress(job));
    }

    public FsckReport fsck() {
        return fsck(clock.millis());
    }

    /** The time the GC goes by (the server's clock). */
    public long now() {
        return clock.millis();
    }

    /** The compaction threshold ({@code holdfast.gc.compaction-threshold}); 0 when compaction is off. */
    public double compactionThreshold() {
        return compactionThreshold;
    }

    /**
     * Reclaim-now: an exact mark over every snapshot the catalog retains (held, locked and pinned
     * ones included), then frees every block none of them references, whatever its expiry, except
     * blocks a backup in progress wrote or matched; then compacts. Runs under the cycle lock (waits
     * for a running cycle or deletion; they wait for it). Cost: a full mark, O(catalog). Stops at a
     * safe point ({@code JobCancelledException}) if {@code job} asks. See {@link ReclaimNow}.
     */
    public ReclaimReport reclaimNow(org.holdfast.server.jobs.JobContext job) {
        return reclaimNow(job, java.util.OptionalDouble.empty());
    }

    /**
     * As above; a present {@code compactionThreshold} (0..1) replaces
     * {@code holdfast.gc.reclaim-compaction-threshold} for this run (the higher of it and the cycle's
     * threshold still applies, and none when compaction is off).
     */
    public ReclaimReport reclaimNow(org.holdfast.server.jobs.JobContext job, java.util.OptionalDouble compactionThreshold) {
        deletions.finishPending();
        return reclaimNow.run(job, compactionThreshold);
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
        return cycle.last();
    }

    /** Simulated crash (tests): the GC stops without flushing its log buffer or checkpointing. */
    void abandon() {
        pipeline.abandon();
    }

    /** Orderly shutdown: commits every queued GMA update. Call before the metadata database closes. */
    @Override
    public void close() {
        if (ops.failure() == null) {
            sweeper.saveSkipTable(); // so the first sweep after the next start need not read every GMA chunk
        }
        long routedThrough = bookkeeping.lastAppliedOp();
        pipeline.close();
        if (bookkeeping instanceof RoutedBookkeeping) {
            recordRoutedThrough(routedThrough);
        }
    }

    /**
     * A master with data on workers: records that every operation up to {@code opId} is routed (its
     * shares in the outbox, its group in the closed log), for {@code WorkerGcExport}, which trusts
     * the workers' routed marks only if this equals the last recorded operation. Read before the log
     * closed, so never above what is routed; a failure here only makes the next export's routed mark
     * unknown.
     */
    private void recordRoutedThrough(long opId) {
        if (catalog.db().isClosed()) { // closed out of order: a native write on a closed database must not be tried
            LOG.log(System.Logger.Level.WARNING, "the catalog closed before the GC: a worker's counts exported now will not say which"
                    + " deltas were routed to it");
            return;
        }
        try (MetadataBatch b = new MetadataBatch()) {
            catalog.db().putMetaLong(b, GcRecords.ROUTED_THROUGH, opId);
            catalog.db().write(b, true);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not record how far the GC routed its operations (" + e.getMessage() + "); a"
                    + " worker's counts exported before the next clean stop will not say which deltas were routed to it");
        }
    }
}
