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
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.RangeTakeover;

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
 */
public final class WorkerFsck {
    private final Path rangeData;
    private final Path scratchParent;
    private final Duration progressEvery;
    private final GcMetadataRebuild.Progress progress;

    /**
     * @param rangeData     the worker's {@code <data-dir>/range-data} (the caller holds the data directory's shared lock)
     * @param scratchParent where the scratch copy of the range store's catalog and GC directory goes
     * @param progressEvery how often a progress line (rate, ETA) is given while blocks are read
     */
    public WorkerFsck(Path rangeData, Path scratchParent, Duration progressEvery, GcMetadataRebuild.Progress progress) {
        this.rangeData = rangeData;
        this.scratchParent = scratchParent;
        this.progressEvery = progressEvery;
        this.progress = progress;
    }

    /**
     * Checks the worker against {@code file}.
     *
     * @throws WorkerCountsFile.BadCountsFileException the file is not whole and intact
     * @throws IllegalStateException                   the file is another worker's, or there is no range store
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
             MetadataDb db = MetadataDb.open(copy.catalogDir(), List.of(), false);
             DataStore store = DataStore.openReadOnly(rangeData.resolve("data"), db)) {
            refuseArchived(db, header.workerId());
            PbnRange range = DataStore.storedRange(db);
            if (!header.range().equals(range)) {
                throw new IllegalStateException("the counts file " + file + " is for worker " + header.workerId() + " with PBNs "
                        + header.range() + ", but the range store in " + rangeData + " holds PBNs " + range + ": it is another"
                        + " worker's (export the counts of the worker whose range this is)");
            }
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
                ReferencedBlockCheck blocks = new ReferencedBlockCheck(store, referenced[0], progressEvery, progress);
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
                        records[0], referenced[0], blocks.blocksRead(), blocks.bytesRead(), blocks.storedBlocks(),
                        blocks.missing(), blocks.corrupt(), counts == null ? none : counts.rcBelow(),
                        counts == null ? none : counts.rcAbove(), counts == null ? none : counts.pinsDiffer(),
                        blocks.leaks(), (System.nanoTime() - started) / 1_000_000);
            } finally {
                if (pipeline != null) {
                    pipeline.close();
                }
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
     * A range store that archives to an object store (backend s3) keeps sealed logs only in the bucket
     * (evicted from its cache, or adopted by a takeover), and this check reads local logs only: it
     * would report their blocks lost. Refused before anything is read.
     */
    private void refuseArchived(MetadataDb db, long workerId) {
        long epoch = RangeTakeover.storedEpoch(db, workerId);
        if (epoch != 0) {
            throw new IllegalStateException("the range store in " + rangeData + " archives its data logs to an object store (worker "
                    + workerId + ", epoch " + epoch + "): its sealed logs may be in the bucket only, which worker-fsck does not read,"
                    + " so it would report their blocks lost; nothing was checked. Checking an archiving worker is not built:"
                    + " restore a snapshot to prove its blocks read back");
        }
    }
}
