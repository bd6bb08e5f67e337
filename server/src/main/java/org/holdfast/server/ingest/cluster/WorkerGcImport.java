package org.holdfast.server.ingest.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GcMetadataArray;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.gma.GmaLayout;
import org.holdfast.server.gc.GcDirectorySwap;
import org.holdfast.server.gc.GmaEntryDigest;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LocationIndex;
import org.holdfast.server.store.MetadataDb;

/**
 * Rebuilds a stopped worker's GC metadata ({@code range-data/gc}: GMA and BOSC log) from the counts
 * a stopped master exported for it ({@link WorkerCountsFile}, {@code gc-rebuild --worker N}), for a
 * worker whose {@code range-data/gc} was lost while its range data stayed ({@link WorkerGcMetadata#COUNTS_LOST}).
 *
 * <p>What the new metadata holds: every record's RC, pins and ET; every PBN the range store has
 * handed out whose RC is 0 an ET of at least now + grace (as the standalone rebuild gives a stored
 * block: a backup in flight when the metadata was lost may have written or matched it); and one
 * empty log group numbered with the file's mark, so the worker answers every delta at or below the
 * mark as a replay (it is in the counts) and logs every later one; and the {@link CountsImportRecord}
 * naming the file's worker, range and mark, which the worker reports at REGISTER (cluster version 7)
 * so that the master lifts the counts fence a catalog restore set.
 *
 * <p>Refused, with nothing changed: a file that is not whole and intact, a file for another range
 * than the range store's, a data directory a running server holds, and GC metadata in place that
 * logged a delta above the file's mark (the worker ran and acknowledged deltas after the export:
 * the master no longer holds them, so the file lacks them; export again).
 *
 * <h2>Crash safety</h2>
 * As {@code gc-rebuild}: built in {@code range-data/gc.rebuild} (deleted first if an earlier run
 * left it), the log's mark and every GMA slot read back and compared, forced to disk; then
 * {@code gc/} is renamed to {@code gc.replaced-<time>} and {@code gc.rebuild} to {@code gc}, each
 * rename followed by a directory fsync. A crash before the first rename leaves {@code gc/} as it was;
 * between the renames, no {@code gc/} (a worker started then creates fresh metadata, finds the range
 * store holding blocks and marks it counts-lost: nothing is swept); running the import again finishes
 * either way. The {@code counts-lost} mark lives in the old directory, so it goes with the swap.
 */
public final class WorkerGcImport {
    /** Name of the directory the import is built in, next to {@code gc/}. */
    public static final String BUILD_DIR = GcDirectorySwap.BUILD_DIR;
    /** Prefix of the directory the replaced {@code gc/} is moved to. */
    public static final String REPLACED_PREFIX = GcDirectorySwap.REPLACED_PREFIX;

    private final Path rangeData;
    private final Duration grace;
    private final Clock clock;
    private final Progress progress;

    /** Receives progress lines. */
    @FunctionalInterface
    public interface Progress {
        void step(String line);
    }

    /** What an import did. */
    public record Report(long workerId, PbnRange range, long mark, long records, long handedOutLimit, long graced,
                         long chunksWritten, long graceUntil, String replacedDir, boolean countsLostRemoved, long millis) {
    }

    /**
     * @param rangeData the worker's {@code <data-dir>/range-data} (the caller holds the data directory's lock)
     * @param grace     the worker's {@code holdfast.gc.grace}
     */
    public WorkerGcImport(Path rangeData, Duration grace, Clock clock, Progress progress) {
        this.rangeData = rangeData;
        this.grace = grace;
        this.clock = clock;
        this.progress = progress;
    }

    /**
     * Checks {@code file}, builds, verifies and swaps in the new GC metadata.
     *
     * @throws WorkerCountsFile.BadCountsFileException the file is not whole and intact
     * @throws IllegalStateException                   it does not fit this worker (see the class comment); nothing changed
     */
    public Report run(Path file) {
        long started = System.nanoTime();
        if (!Files.isDirectory(rangeData.resolve("catalog"))) {
            throw new IllegalStateException(rangeData + " holds no range store (no catalog/ in it): this is not the data directory"
                    + " of a worker with holdfast.cluster.data=workers; nothing was changed");
        }
        progress.step("checking " + file);
        WorkerCountsFile.Header header = WorkerCountsFile.verify(file); // before anything of the worker's is opened
        PbnRange range;
        long handedOut;
        try (MetadataDb db = MetadataDb.open(rangeData.resolve("catalog"), List.of(), true)) {
            range = DataStore.storedRange(db);
            handedOut = handedOutLimit(db, range);
        }
        if (range.equals(PbnRange.STANDALONE)) {
            throw new IllegalStateException("the range store in " + rangeData + " records no PBN range; nothing was changed");
        }
        if (!header.range().equals(range)) {
            throw new IllegalStateException("the counts file " + file + " is for worker " + header.workerId() + " with PBNs "
                    + header.range() + ", but the range store in " + rangeData + " holds PBNs " + range + ": it is another"
                    + " worker's; nothing was changed (export the counts of the worker whose range this is)");
        }
        Path gc = rangeData.resolve("gc");
        long acknowledged = AcknowledgedDeltaMark.read(rangeData);
        if (acknowledged > header.mark()) {
            throw new IllegalStateException("the worker ran and acknowledged deltas after the export: it acknowledged GC deltas up"
                    + " to " + acknowledged + " (" + rangeData.resolve(AcknowledgedDeltaMark.FILE) + "), above the counts file's mark "
                    + header.mark() + ", and the file lacks their counts, which the master no longer holds in its outbox (even if "
                    + rangeData.resolve("gc") + " was lost since); nothing was changed: stop the master, export again, and import"
                    + " before starting the worker");
        }
        long inPlace = markInPlace(gc, range);
        if (inPlace > header.mark()) {
            throw new IllegalStateException("the GC metadata in " + gc + " has logged GC deltas up to " + inPlace + ", above the"
                    + " counts file's mark " + header.mark() + ": the worker ran and acknowledged deltas after the export, and the"
                    + " file lacks them; nothing was changed: stop the master, export again, and import before starting the worker");
        }
        long now = clock.millis();
        long graceUntil = now + grace.toMillis();
        GcDirectorySwap dirs = new GcDirectorySwap(rangeData, "worker-gc-import");
        Path build = dirs.freshBuild();
        Builder b = new Builder(range, handedOut, graceUntil);
        try (GcMetadataArray gma = GcMetadataArray.open(build, 16, range)) {
            b.gma = gma;
            progress.step("building " + build + " (" + (handedOut - range.first()) + " PBNs handed out)");
            WorkerCountsFile.read(file, b::record); // checked again while applied: a change since verify() throws before the swap
            b.fillTo(handedOut);
            b.flush();
            gma.sync();
        }
        KillPoints.hit(KillPoints.GC_REBUILD_BEFORE_VERIFY);
        writeLog(build, range, header.mark());
        // swapped in with the metadata it describes: the worker reports it at REGISTER, and the master lifts its counts fence
        CountsImportRecord.write(build, new CountsImportRecord.Imported(header.workerId(), range, header.mark(), now));
        progress.step("verifying " + build);
        verify(build, range, header.mark(), b.written);
        dirs.forceTree(build);
        boolean countsLost = Files.exists(gc.resolve(WorkerGcMetadata.COUNTS_LOST));
        progress.step("swapping " + build + " in as " + gc);
        String replaced = dirs.swap(build, gc, clock);
        long millis = (System.nanoTime() - started) / 1_000_000;
        return new Report(header.workerId(), range, header.mark(), b.records, handedOut, b.graced, b.chunks, graceUntil, replaced,
                countsLost, millis);
    }

    /** One past the highest PBN the range store has handed out: its reservation, or above it a located PBN. */
    private static long handedOutLimit(MetadataDb db, PbnRange range) {
        long[] limit = {Math.max(db.metaLong(FormatVersions.META_PBN_RESERVED, range.first()), range.first())};
        new LocationIndex(db).forEachFrom(limit[0], (pbn, logId, offset, len, fps, fpOff) -> {
            limit[0] = Math.max(limit[0], pbn + 1);
            return true;
        });
        return Math.min(limit[0], range.limit());
    }

    /** The log mark of the GC metadata in {@code gc}, 0 if there is none. */
    private static long markInPlace(Path gc, PbnRange range) {
        if (!Files.exists(gc.resolve(GmaFormat.RANGE_FILE))) {
            return 0;
        }
        try (BoscPipeline p = BoscPipeline.open(gc, BoscSettings.defaults().withCommitters(1), range)) {
            return p.lastOpId();
        } catch (RuntimeException e) {
            throw new IllegalStateException("the GC metadata in " + gc + " cannot be opened (" + e.getMessage() + "), so it cannot"
                    + " be checked for deltas logged after the export; nothing was changed: if the worker has not run since the"
                    + " export, move " + gc + " aside and run the import again", e);
        }
    }

    /** Applies the records and the grace of unreferenced handed-out PBNs chunk by chunk, in PBN order. */
    private static final class Builder {
        static final int SYNC_EVERY_CHUNKS = 512;
        final PbnRange range;
        final GmaLayout layout;
        final long handedOut;
        final long graceUntil;
        final GmaEntryDigest written = new GmaEntryDigest();
        GcMetadataArray gma;
        GmaChunk chunk;
        ReentrantLock lock;
        long next; // the lowest PBN not visited yet
        long records;
        long graced;
        long chunks;

        Builder(PbnRange range, long handedOut, long graceUntil) {
            this.range = range;
            this.layout = new GmaLayout(range);
            this.handedOut = handedOut;
            this.graceUntil = graceUntil;
            this.next = range.first();
        }

        void record(long pbn, int rc, int pins, long expiry) {
            fillTo(pbn);
            boolean unreferenced = rc == 0 && pbn < handedOut;
            put(pbn, rc, pins, unreferenced ? Math.max(expiry, graceUntil) : expiry);
            if (unreferenced) {
                graced++;
            }
            records++;
            next = pbn + 1;
        }

        /** Every PBN from {@link #next} below {@code limit} has no record (RC 0): one handed out gets the grace. */
        void fillTo(long limit) {
            for (long pbn = next; pbn < Math.min(limit, handedOut); pbn++) {
                put(pbn, 0, 0, graceUntil);
                graced++;
            }
            next = Math.max(next, limit);
        }

        private void put(long pbn, int rc, int pins, long et) {
            long ci = layout.chunkOf(pbn);
            if (chunk == null || chunk.index() != ci) {
                flush();
                lock = gma.lock(ci);
                lock.lock();
                chunk = gma.load(ci);
            }
            int slot = layout.slotOf(pbn);
            chunk.addRc(slot, rc);
            chunk.addPins(slot, pins);
            chunk.raiseExpiry(slot, et);
            if ((chunk.flags(slot) & GmaFormat.FLAG_USED) != 0) {
                written.add(pbn, chunk.rc(slot), chunk.pins(slot), chunk.expiry(slot));
            }
        }

        void flush() {
            if (chunk == null) {
                return;
            }
            try {
                gma.write(chunk);
                chunks++;
            } finally {
                lock.unlock();
                chunk = null;
                lock = null;
            }
            if (chunks % SYNC_EVERY_CHUNKS == 0) {
                gma.sync(); // as gc-rebuild per pass: the GMA's double-write journal holds a bounded number of chunks
            }
            KillPoints.hit(KillPoints.GC_REBUILD_AFTER_CHUNK);
        }
    }

    /** Starts the new log with one empty group numbered {@code mark}: every delta at or below it is a replay. */
    private static void writeLog(Path build, PbnRange range, long mark) {
        try (BoscPipeline pipeline = BoscPipeline.open(build, BoscSettings.defaults().withCommitters(1), range)) {
            if (mark > 0) {
                pipeline.appendGroup(mark, new UpdateBatch(0));
            }
            pipeline.awaitDurable();
        }
    }

    /** Reopens the built directory as the worker would and compares its mark and every slot with what was written. */
    private static void verify(Path build, PbnRange range, long mark, GmaEntryDigest written) {
        GmaEntryDigest back;
        try (BoscPipeline pipeline = BoscPipeline.open(build, BoscSettings.defaults().withCommitters(1), range)) {
            if (pipeline.lastOpId() != mark) {
                throw new IllegalStateException("verification of " + build + " failed: it opens logged up to " + pipeline.lastOpId()
                        + ", expected the mark " + mark + "; nothing was swapped in");
            }
            back = GmaEntryDigest.readBack(pipeline);
        }
        if (!back.sameAs(written)) {
            throw new IllegalStateException("verification of " + build + " failed: read back " + back.entries() + " GMA entries, wrote "
                    + written.entries() + ", or their contents differ; nothing was swapped in");
        }
    }
}
