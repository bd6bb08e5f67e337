package org.holdfast.server.gc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreStats;
import org.holdfast.server.store.object.ObjectStoreUnavailableException;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3Settings;

/**
 * Checks a stopped worker's range store and GC metadata ({@code <data-dir>/range-data}) against the
 * counts its stopped master exported for it ({@link WorkerCountsFile}, {@code gc-rebuild --worker N
 * --out FILE}): the offline fsck of data on workers, where the master's own fsck cannot see the
 * blocks. What it reports: {@link WorkerFsckReport}.
 *
 * <p>Read-only, how: the caller holds the data directory's shared lock (a running worker holds it
 * exclusively, so it is refused, and none can start meanwhile); the range store's data logs are
 * opened read-only ({@link DataStore#openReadOnly}, nothing recovered or written); the range store's
 * catalog and the GC directory are opened on a private scratch copy ({@link ScratchMetadata}), so
 * what opening them writes (RocksDB's log and manifest, the GC log's replay into the GMA, a corrupt
 * block marked bad) lands in the copy, deleted at the end.
 *
 * <p>One streaming pass over the file, PBN order: every record with RC above 0 is looked up in the
 * range store and read through its verifying read (header and CRC32C, a frame member's SHA-256)
 * and hashed again against its fingerprint; when the marks allow ({@link WorkerFsckReport.Marks}:
 * equal, or the worker logged every delta the master routed to it and none after the export) its
 * GMA slot is compared ({@link CountsComparison}); the stored PBNs between two referenced ones are the leaks. Memory does
 * not grow with the range: one GMA chunk and one block at a time.
 *
 * <p>A range store that archives to an object store (backend s3) is read as its worker reads it: a
 * sealed log on the local disk from there, any other through the worker's {@link LogArchive} (its
 * key space and epoch, the bucket given as the worker's settings), read-only: the logs are seen
 * through a directory of links in the scratch copy, where the ranges fetched from the bucket are
 * cached too, and the bucket is only listed and read. A bucket that cannot be read ends the check
 * (could not run), never as blocks lost.
 */
public final class WorkerFsck {
    /** The checker's own cache of ranges fetched from the bucket, in the scratch copy: 1 MiB ranges as the worker's, 64 MiB. */
    private static final LogCache.Settings CHECK_CACHE = new LogCache.Settings(64L << 20, 1 << 20, false, 1, 1 << 20);

    private final Path rangeData;
    private final Path scratchParent;
    private final Duration progressEvery;
    private final GcMetadataRebuild.Progress progress;
    private final S3Settings s3;

    /**
     * @param rangeData     the worker's {@code <data-dir>/range-data} (the caller holds the data directory's shared lock)
     * @param scratchParent where the scratch copy of the range store's catalog and GC directory goes
     * @param progressEvery how often a progress line (rate, ETA) is given while blocks are read
     */
    public WorkerFsck(Path rangeData, Path scratchParent, Duration progressEvery, GcMetadataRebuild.Progress progress) {
        this(rangeData, scratchParent, progressEvery, progress, null);
    }

    /**
     * As {@link #WorkerFsck(Path, Path, Duration, GcMetadataRebuild.Progress)}, reading the logs of an
     * archiving range store that are not on the local disk from the bucket of {@code s3} (the worker's
     * {@code holdfast.store.s3.*}; null: none given, and such a store is refused).
     */
    public WorkerFsck(Path rangeData, Path scratchParent, Duration progressEvery, GcMetadataRebuild.Progress progress, S3Settings s3) {
        this.rangeData = rangeData;
        this.scratchParent = scratchParent;
        this.progressEvery = progressEvery;
        this.progress = progress;
        this.s3 = s3;
    }

    /**
     * Checks the worker against {@code file}.
     *
     * @throws WorkerCountsFile.BadCountsFileException the file is not whole and intact
     * @throws IllegalStateException                   the file is another worker's, there is no range store, or an
     *                                                 archiving store's bucket was not given or cannot be read
     */
    public WorkerFsckReport run(Path file) {
        long started = System.nanoTime();
        if (!Files.isDirectory(rangeData.resolve("catalog"))) {
            throw new IllegalStateException(rangeData + " holds no range store (no catalog/ in it): this is not the data directory"
                    + " of a worker with holdfast.cluster.data=workers");
        }
        progress.step("checking " + file);
        long[] referenced = {0};
        long[] records = {0};
        WorkerCountsFile.Header header = WorkerCountsFile.read(file, (pbn, rc, pins, expiry) -> {
            records[0]++;
            if (rc > 0) {
                referenced[0]++;
            }
        });
        Path gc = rangeData.resolve("gc");
        boolean hasGc = Files.exists(gc.resolve(GmaFormat.RANGE_FILE));
        boolean countsLost = Files.exists(gc.resolve("counts-lost")); // WorkerGcMetadata.COUNTS_LOST (ingest/cluster)
        try (ScratchMetadata copy = ScratchMetadata.copy(rangeData, scratchParent);
             MetadataDb db = MetadataDb.open(copy.catalogDir(), List.of(), false)) {
            PbnRange range = DataStore.storedRange(db);
            if (!header.range().equals(range)) {
                throw new IllegalStateException("the counts file " + file + " is for worker " + header.workerId() + " with PBNs "
                        + header.range() + ", but the range store in " + rangeData + " holds PBNs " + range + ": it is another"
                        + " worker's (export the counts of the worker whose range this is)");
            }
            try (LogArchive archive = archive(db, header.workerId(), referenced[0] > 0);
                 DataStore store = archive == null ? DataStore.openReadOnly(rangeData.resolve("data"), db)
                         // logs fetched or cached land in the scratch copy's view of the logs, never in range-data
                         : DataStore.openReadOnly(copy.linkDataLogs(rangeData.resolve("data")), db, archive)) {
                WorkerFsckReport r = check(file, header, copy, gc, hasGc, countsLost, store, range, records[0], referenced[0], started);
                if (archive != null) {
                    ObjectStoreStats s = archive.stats().requests();
                    progress.step("read from the object store: " + s.gets() + " GETs, " + s.getBytes() + " bytes");
                }
                return r;
            } catch (ObjectStoreUnavailableException e) {
                throw new IllegalStateException("the object store could not be read while the blocks were checked: " + e.getMessage()
                        + "; no block was reported lost for it and nothing was checked to the end. Check the worker's"
                        + " holdfast.store.s3.* settings and the object store's health, then run worker-fsck again", e);
            }
        }
    }

    private WorkerFsckReport check(Path file, WorkerCountsFile.Header header, ScratchMetadata copy, Path gc, boolean hasGc,
                                   boolean countsLost, DataStore store, PbnRange range, long records, long referenced, long started) {
        BoscPipeline pipeline = null;
        try {
            if (hasGc) {
                pipeline = openGc(copy, gc, range);
            }
            long workerMark = pipeline == null ? -1 : pipeline.lastOpId();
            WorkerFsckReport.Marks marks = WorkerFsckReport.Marks.of(hasGc ? workerMark : null, header.mark(), header.routedMark());
            progress.step("GC delta marks: file " + header.mark() + ", worker " + (hasGc ? workerMark : "none") + ", routed "
                    + (header.routedMarkKnown() ? header.routedMark() : "unknown")
                    + (marks.compared() ? " (comparing counts: " + marks + ")" : " (counts not compared: " + marks + ")"));
            CountsComparison counts = marks.compared() ? new CountsComparison(pipeline) : null;
            ReferencedBlockCheck blocks = new ReferencedBlockCheck(store, referenced, progressEvery, progress);
            WorkerCountsFile.read(file, (pbn, rc, pins, expiry) -> {
                if (rc > 0) {
                    blocks.check(pbn);
                }
                if (counts != null) {
                    counts.record(pbn, rc, pins);
                }
            });
            blocks.finish();
            if (counts != null) {
                counts.finish();
            }
            WorkerFsckReport.Finding none = new WorkerFsckReport.Finding(0, List.of());
            return new WorkerFsckReport(header.workerId(), range, header.mark(), workerMark, header.routedMark(),
                    header.outboxEntries(), marks, countsLost,
                    records, referenced, blocks.blocksRead(), blocks.bytesRead(), blocks.storedBlocks(),
                    blocks.missing(), blocks.corrupt(), counts == null ? none : counts.rcBelow(),
                    counts == null ? none : counts.rcAbove(), counts == null ? none : counts.pinsDiffer(),
                    blocks.leaks(), (System.nanoTime() - started) / 1_000_000);
        } finally {
            if (pipeline != null) {
                pipeline.close();
            }
        }
    }

    /** Opens the scratch copy of {@code gc} (replaying its log there) and commits what the replay queued, so the GMA is current. */
    private static BoscPipeline openGc(ScratchMetadata copy, Path gc, PbnRange range) {
        BoscPipeline p;
        try {
            p = BoscPipeline.open(copy.gcDir(), BoscSettings.defaults().withCommitters(1), range);
        } catch (RuntimeException e) {
            // the message names the scratch copy; the operator needs the real directory
            throw new IllegalStateException("the GC metadata in " + gc + " cannot be opened: "
                    + String.valueOf(e.getMessage()).replace(copy.gcDir().toString(), gc.toString()) + " (rebuild it: export"
                    + " the worker's counts on the stopped master and run worker-gc-import here)", e);
        }
        try {
            p.commitAll();
            return p;
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /**
     * The archive a range store that archives to an object store (backend s3; its catalog records a
     * takeover epoch) reads its sealed logs through, as the running worker's: the worker's key space at
     * its epoch, in the bucket of {@link #s3}; null for a local store. Its sealed logs may be in the
     * bucket only (evicted from its cache, or adopted by a takeover), so it is refused without the
     * bucket, and when one LIST of the worker's keys shows the bucket cannot be read, is not the
     * worker's, or holds a later epoch (another node took the range over): nothing read yet, and no
     * block ever reported lost because the bucket was not there.
     */
    private LogArchive archive(MetadataDb db, long workerId, boolean blocksReferenced) {
        long epoch;
        try {
            epoch = RangeTakeover.storedEpoch(db, workerId);
        } catch (StoreException e) {
            throw new IllegalStateException("the range store in " + rangeData + " archives its data logs as another worker than the"
                    + " counts file's worker " + workerId + ": it is another worker's (export the counts of the worker whose range"
                    + " this is); nothing was checked", e);
        }
        if (epoch == 0) {
            return null;
        }
        String space = WorkerKeys.space(workerId, epoch);
        if (s3 == null) {
            throw new IllegalStateException("the range store in " + rangeData + " archives its data logs to an object store (worker "
                    + workerId + ", epoch " + epoch + ", " + space + "/): its sealed logs may be in the bucket only, so the check needs"
                    + " the worker's bucket settings, which were not given; nothing was checked. Give them as the worker's start"
                    + " reads them: --holdfast.store.backend=s3 --holdfast.store.s3.bucket=... (and endpoint, prefix, region,"
                    + " credentials-file, path-style as the worker has them) on the command line, or as HOLDFAST_STORE_*"
                    + " environment variables");
        }
        ObjectStore objects = S3ObjectStore.connect(s3);
        try {
            long newest;
            try {
                newest = RangeTakeover.highestEpoch(workerId, objects);
            } catch (ObjectStoreUnavailableException e) {
                throw new IllegalStateException("the object store cannot be read (" + s3.endpoint() + ", bucket " + s3.bucket()
                        + ", prefix '" + s3.prefix() + "'): " + e.getMessage() + "; nothing was checked. Check the worker's"
                        + " holdfast.store.s3.* settings and the object store's health, then run worker-fsck again", e);
            }
            if (newest > epoch) {
                throw new IllegalStateException("worker " + workerId + "'s range was taken over at epoch " + newest + " by another"
                        + " node, while the range store in " + rangeData + " archives at epoch " + epoch + ": this directory is"
                        + " stale (the worker refuses to serve from it); nothing was checked. Check the node that serves worker "
                        + workerId + "'s range now");
            }
            if (newest < epoch && (epoch > 1 || blocksReferenced)) {
                throw new IllegalStateException("the bucket " + s3.bucket() + " (prefix '" + s3.prefix() + "') holds no object of "
                        + space + "/, where the range store in " + rangeData + " archives: these are not the worker's bucket"
                        + " settings; nothing was checked. Give its holdfast.store.s3.bucket, prefix and endpoint as it has them");
            }
            progress.step("reading data logs that are not on the local disk from the object store (" + s3.endpoint() + ", bucket "
                    + s3.bucket() + ", " + s3.prefix() + space + "/ and the earlier epochs' logs it adopted)");
            return LogArchive.forKeySpace(objects, space, CHECK_CACHE);
        } catch (RuntimeException e) {
            objects.close();
            throw e;
        }
    }
}
