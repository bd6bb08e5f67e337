package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.kill.KillPoints;

/**
 * Reclaims the space of freed blocks while the store serves: rewrites each sealed data log whose
 * live share (bytes of records that still have a location, over the log's record bytes) is below a
 * threshold, keeping only live records; a log with no live record is deleted. GC frees a block by
 * deleting its location, so "live" is exactly "has a location". PBNs never change; only locations
 * move. Only logs below {@link DataStore#compactableBelow()} are touched: sealed, and every record
 * in them indexed. One compaction at a time per store.
 *
 * <h2>Protocol and crash safety</h2>
 * For log L: (1) without any lock, copy the live records (each checked against its CRC; {@link LiveCopy}) to
 * {@code L.compact}, force it and the directory; (2) under the store's exclusive relocation lock,
 * keep only the records whose location still names their old place (the sweep may have freed some
 * meanwhile: those are never given a location again), and in one synced batch point them at their
 * new offsets and set the intent {@code store.compaction-intent = L}; (3) still under the lock,
 * rename {@code L.compact} over L and force the directory, so readers, who hold the shared side
 * from location lookup to file read, see old locations with the old file or new with new; (4) clear
 * the intent. {@link #finishInterrupted} runs whenever a store opens: with an intent, a remaining
 * {@code .compact} file is renamed into place (the locations already name it); without one, stray
 * {@code .compact} files are deleted (the locations still name the old log). An intent left by a
 * failed clear is settled at the start of the next run, before any copy is written
 * ({@code settleLeftoverIntent}). A record that fails its
 * checksum stops the compaction of its log, which is then left as it is: compaction never drops data.
 * A log deferred for lack of room (or by the byte bound) still gives back its dead tail, the bytes
 * after its last live record, by a cut instead of a copy ({@link DeadTails}, {@link DataStore#trimLog}).
 *
 * <h2>Frame records</h2>
 * A frame whose members are all live is copied as it is; one with no live member is dropped; one
 * with dead members is repacked by {@link FrameRepack} into a frame of its live members only (with
 * a member map when they are not consecutive PBNs). The switch gives each live member the new
 * frame's location; the crash protocol is the same.
 *
 * <h2>With an object-store archive (backend s3)</h2>
 * Only logs whose upload is confirmed are touched, whether or not the local cache still holds their
 * file (an evicted one is downloaded for the copy). The copy gets a new epoch in its header, so it
 * is a new object: it is uploaded between steps 1 and 2 under a synced delete intent, the switch
 * batch also points the upload record at it and turns the intent onto the old object, which is
 * deleted after the switch. A dead log is deleted through {@link LogArchive#retireLog}: intent,
 * file, object, then upload record. A crash anywhere is finished at the next start.
 */
public final class Compactor {
    private static final System.Logger LOG = System.getLogger(Compactor.class.getName());
    /** Logs whose live share is below this are rewritten. */
    public static final double DEFAULT_THRESHOLD = 0.5;
    /**
     * Reclaim-now's threshold: an operator asking for space now gets every log at least 5 % dead
     * rewritten, at a cost of at most 19 bytes copied per byte given back (bounded by the run's
     * byte bound and the free space above the GC floor).
     */
    public static final double DEFAULT_RECLAIM_THRESHOLD = 0.95;
    static final String META_INTENT = "store.compaction-intent";
    static final String STORE = "compactor";
    static final String SUFFIX = ".compact";
    private static final String SOURCE_SUFFIX = ".source" + SUFFIX;
    /** How long a run waits for the upload of an active log it sealed (backend s3) before leaving it to a later run. */
    private static final long UPLOAD_WAIT_MILLIS = 10 * 60_000L;

    /**
     * What a run did. {@code bytesBefore}/{@code bytesAfter}: sealed logs' size; {@code bytesCopied}:
     * live record bytes rewritten; {@code logsDeferred}: below the threshold but left for a later run
     * by the bytes bound or for lack of room above the GC floor; {@code recordsFreedMeanwhile}: copied, but freed by the sweep before the
     * switch (their copies are dead space now); {@code bytesDeferred}: live bytes of the deferred logs,
     * what rewriting them would copy (and so needs free above the GC floor); {@code logsTrimmed}:
     * deferred logs whose dead tail was cut off instead (see {@link DeadTails}).
     */
    public record Result(int logsExamined, int logsRewritten, int logsDeleted, long bytesBefore, long bytesAfter,
                         long recordsMoved, int logsSkippedCorrupt, long bytesCopied, int logsDeferred,
                         long recordsFreedMeanwhile, long nanos, long bytesDeferred, int logsTrimmed) {
        static final Result NONE = new Result(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

        /** Bytes given back to the file system. */
        public long bytesReclaimed() {
            return bytesBefore - bytesAfter;
        }
    }

    private final DataStore store;
    private final MetadataDb db;
    private final LiveCopy copy;
    private boolean archiveNoted;
    /** Test seam: gets the log id after its live records are copied, before the switch (a sweep may free some here). */
    volatile java.util.function.IntConsumer beforeSwitch = id -> { };

    /** A compactor of {@code store}, which must stay open while it runs. */
    public Compactor(DataStore store) {
        this.store = store;
        this.db = store.metadata();
        this.copy = new LiveCopy(store);
    }

    /**
     * Offline form: opens the store in {@code dataDir} (which finishes an interrupted compaction),
     * compacts every sealed log below {@code threshold}, closes it. For tools and tests.
     */
    public static Result compact(Path dataDir, MetadataDb db, double threshold) {
        checkThreshold(threshold);
        if (!Files.isDirectory(dataDir)) {
            return Result.NONE;
        }
        if (db.get(db.handle(MetadataDb.Column.META), MetadataDb.bytes(FormatVersions.META_DURABLE_POINT)) == null) {
            finishInterrupted(dataDir, db);
            return Result.NONE;
        }
        try (DataStore s = DataStore.open(new DataStore.Settings(dataDir, 256L << 20, FsyncPolicy.COMMIT, 1 << 16, 0, StoreRange.stored(db)), db)) {
            return new Compactor(s).run(threshold, Long.MAX_VALUE);
        }
    }

    /**
     * Compacts sealed logs whose live share is below {@code threshold}, lowest share first, copying
     * at most about {@code maxBytesCopied} live bytes (at least one log is always taken); deletes dead
     * logs whatever the bound. Safe while the store appends and serves reads.
     */
    public Result run(double threshold, long maxBytesCopied) {
        return run(threshold, maxBytesCopied, false);
    }

    /**
     * As {@link #run(double, long)}; with {@code sealSparseActive}, an active log whose indexed part
     * is live below {@code threshold} is sealed first ({@link DataStore#sealActive}), so that this
     * run can rewrite it; new appends go to a fresh log. Without it, garbage in the active log waits
     * until the log is full (the roll size), which on a small store may be never.
     */
    public Result run(double threshold, long maxBytesCopied, boolean sealSparseActive) {
        checkThreshold(threshold);
        synchronized (store.compactionLock) {
            return runLocked(threshold, maxBytesCopied, sealSparseActive, System.nanoTime());
        }
    }

    private Result runLocked(double threshold, long maxBytesCopied, boolean sealSparseActive, long t0) {
        LogArchive archive = store.archive();
        if (archive == null && LogArchive.inUse(db)) {
            // an archived store opened without its object store (a tool): a rewrite here would not reach the objects
            if (!archiveNoted) {
                archiveNoted = true;
                LOG.log(Level.INFO, "not compacting: the sealed data logs are in an object store, and this store was opened without it");
            }
            return new Result(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, System.nanoTime() - t0, 0, 0);
        }
        settleLeftoverIntent(); // before this run writes any .compact
        long[] durable = store.durablePoint();
        int below = (int) durable[0];
        // the active log (the durable point's) is a candidate for sealing only with an indexed record in it
        boolean activeCandidate = sealSparseActive && threshold > 0 && durable[1] > DATA_LOG_HEADER_BYTES;
        TreeMap<Integer, Path> sealed = new TreeMap<>();
        try (Stream<Path> s = Files.list(store.dir())) {
            s.forEach(p -> {
                int id = DataLog.parseId(p.getFileName().toString());
                if (id >= 0 && id < below) {
                    sealed.put(id, p);
                }
            });
        } catch (IOException e) {
            throw StoreException.translate(STORE, store.dir().toString(), null, e);
        }
        if (archive != null) {
            // an uploaded log is sealed whether or not the cache kept its file; one not uploaded yet waits for its upload
            sealed.keySet().removeIf(id -> !archive.isUploaded(id));
            for (int id : archive.uploadedIds().headSet(below)) {
                sealed.putIfAbsent(id, store.logPath(id));
            }
            archive.retirePending(); // deletions a crash or an outage interrupted
        }
        if (sealed.isEmpty() && !activeCandidate) {
            return new Result(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, System.nanoTime() - t0, 0, 0);
        }
        // pass 1: live bytes per sealed log (and the active log's, if it may be sealed)
        Map<Integer, long[]> liveBytes = new HashMap<>();
        int counted = activeCandidate ? below : below - 1;
        store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
            if (logId <= counted) {
                // a frame member counts its share of the frame record: a frame's live share is its live members' share
                liveBytes.computeIfAbsent(logId, k -> new long[1])[0] += LiveRecords.recordShare(location);
            }
            return true;
        });
        long[] activeLive = liveBytes.remove(below);
        int sealedActive = activeCandidate ? sealIfSparse(archive, below, durable[1], activeLive == null ? 0 : activeLive[0], threshold) : -1;
        if (sealedActive >= 0) {
            sealed.put(sealedActive, store.logPath(sealedActive));
        }
        if (sealed.isEmpty()) {
            return new Result(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, System.nanoTime() - t0, 0, 0);
        }
        long before = 0;
        List<Integer> dead = new ArrayList<>();
        List<double[]> candidates = new ArrayList<>(); // {id, share, live bytes}
        Map<Integer, Long> sizes = new HashMap<>();
        for (Map.Entry<Integer, Path> e : sealed.entrySet()) {
            long size = logSize(archive, e.getKey(), e.getValue());
            sizes.put(e.getKey(), size);
            before += size;
            long live = liveBytes.getOrDefault(e.getKey(), new long[1])[0];
            if (e.getKey() == sealedActive) {
                // records appended after pass 1 counted nothing there: take them as live, and never call the
                // log dead from pass 1 (pass 2, after the seal's sync indexed every record, decides)
                live = activeLive == null ? 0 : activeLive[0];
                live = Math.max(1, live + size - durable[1]);
            }
            double share = (double) live / Math.max(1, size - DATA_LOG_HEADER_BYTES);
            if (live == 0) {
                dead.add(e.getKey());
            } else if (share < threshold) {
                candidates.add(new double[] {e.getKey(), share, live});
            }
        }
        candidates.sort((a, b) -> Double.compare(a[1], b[1]));
        Map<Integer, LiveRecords> chosen = new TreeMap<>();
        long planned = 0;
        int deferred = 0;
        long deferredBytes = 0;
        DeadTails tails = new DeadTails(); // deferred logs: their dead tails go without a copy (not with an archive: the object)
        for (double[] c : candidates) {
            if (!chosen.isEmpty() && planned + (long) c[2] > maxBytesCopied) {
                deferred++;
                deferredBytes += (long) c[2];
                if (archive == null) {
                    tails.track((int) c[0]);
                }
                continue;
            }
            planned += (long) c[2];
            chosen.put((int) c[0], new LiveRecords());
        }
        long after = before;
        int deleted = 0;
        for (int id : dead) {
            drop(archive, id);
            after -= sizes.get(id);
            deleted++;
        }
        // a rewrite copies before it frees: on a full disk take only what fits above the GC floor, so a
        // compaction never takes the last bytes the catalog needs (the rest waits for a later run)
        long room = store.reserve().gcRoom();
        long take = 0;
        for (double[] c : candidates) {
            int id = (int) c[0];
            if (chosen.containsKey(id)) {
                if (take + (long) c[2] > room) {
                    chosen.remove(id);
                    deferred++;
                    deferredBytes += (long) c[2];
                    if (archive == null) {
                        tails.track(id);
                    }
                } else {
                    take += (long) c[2];
                }
            }
        }
        // pass 2: the records of the chosen logs, in PBN order (which is their order in the log)
        if (!chosen.isEmpty() || !tails.isEmpty()) {
            store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
                LiveRecords l = chosen.get(logId);
                if (l != null) {
                    l.add(pbn, offset, location, fps, fpOff);
                } else {
                    tails.live(logId, offset, location);
                }
                return true;
            });
        }
        int rewritten = 0;
        int skipped = 0;
        long moved = 0;
        long copied = 0;
        long freedMeanwhile = 0;
        for (Map.Entry<Integer, LiveRecords> e : chosen.entrySet()) {
            int id = e.getKey();
            LiveRecords records = e.getValue();
            long oldSize = sizes.get(id);
            if (records.size() == 0) {
                drop(archive, id); // the sweep freed the rest between the passes
                after -= oldSize;
                deleted++;
                continue;
            }
            LOG.log(Level.INFO, () -> "compacting data log " + id + ": " + records.recordBytes() + " of " + oldSize + " bytes live");
            long epoch = archive == null ? -1 : archive.nextEpoch(id);
            Path source = source(archive, id, sealed.get(id));
            long newSize;
            try {
                newSize = copy.copyLive(id, source, records, epoch);
            } finally {
                if (!source.equals(sealed.get(id))) {
                    deleteQuietly(source);
                }
            }
            if (newSize < 0) {
                skipped++;
                continue;
            }
            KillPoints.hit(KillPoints.COMPACTION_AFTER_COPY);
            Path compacted = store.dir().resolve(DataLog.fileName(id) + SUFFIX);
            int n;
            try {
                if (archive != null) {
                    archive.uploadCompacted(id, compacted, epoch);
                }
                beforeSwitch.accept(id);
                n = store.relocate(id, compacted, records, epoch);
            } finally {
                if (archive != null) {
                    archive.settled(id, epoch);
                }
            }
            if (archive != null) {
                archive.retirePending(); // the old object, now that nothing names it
            }
            LOG.log(Level.INFO, () -> "compacted data log " + id + ": " + oldSize + " -> " + newSize + " bytes, " + n + " records moved");
            rewritten++;
            moved += n;
            freedMeanwhile += records.size() - n;
            copied += newSize - DATA_LOG_HEADER_BYTES;
            after -= oldSize - newSize;
        }
        int trimmed = 0;
        for (Map.Entry<Integer, long[]> e : tails.ends().entrySet()) {
            int id = e.getKey();
            long size = sizes.get(id);
            long end = e.getValue()[0];
            // end 0: freed whole since pass 1; the next run finds it dead and deletes it
            if (end > DATA_LOG_HEADER_BYTES && end < size) {
                store.trimLog(id, end);
                LOG.log(Level.INFO, () -> "trimmed data log " + id + ": " + size + " -> " + end + " bytes (its dead tail;"
                        + " the rest waits for a run with more free space or under the byte bound)");
                after -= size - end;
                trimmed++;
            }
        }
        return new Result(sealed.size(), rewritten, deleted, before, after, moved, skipped, copied, deferred, freedMeanwhile,
                System.nanoTime() - t0, deferredBytes, trimmed);
    }

    /**
     * Settles an intent that an earlier run of this open store left because clearing it failed (a
     * start clears any other): the next start renames {@code L.compact} into place whenever the
     * intent names L, so no copy may be written while it stands. Without its copy the switch was
     * complete and the intent is cleared. With it, the switch's rename and its undo both failed: the
     * locations name the copy, and only a start, before any reader, may rename it, so this refuses.
     */
    private void settleLeftoverIntent() {
        long intent = db.metaLong(META_INTENT, -1);
        if (intent < 0) {
            return;
        }
        Path copy = store.dir().resolve(DataLog.fileName((int) intent) + SUFFIX);
        if (hasEntry(copy)) {
            throw new StoreException(STORE, copy.toString(), META_INTENT, "the compaction of data log " + intent
                    + " wrote its new locations but could not rename its copy into place; not compacting until the server"
                    + " restarts (the start finishes the rename; see the log for the error that stopped it)", null);
        }
        LOG.log(Level.INFO, "clearing the intent left by the compaction of data log {0}: its switch was complete", intent);
        clearIntent(db);
    }

    /**
     * Whether directory entry {@code p} is there (a link counts). Unlike
     * {@link Files#exists}, a failure to look (an I/O error, a permission, a link loop) is no "absent":
     * it throws, so an intent is never cleared on a guess.
     */
    private static boolean hasEntry(Path p) {
        try {
            Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            throw new StoreException(STORE, p.toString(), META_INTENT, "cannot tell whether the copy " + p + " of a leftover"
                    + " compaction intent exists (" + e + "): the intent stays and nothing is compacted; check the data"
                    + " directory's disk and permissions, then run again or restart", e);
        }
    }

    /**
     * Seals active log {@code id} when its indexed part ({@code durableLength}, of which {@code live}
     * bytes have a location) is live below {@code threshold}; returns its id if it is sealed, indexed
     * and (with an archive) uploaded, so this run may rewrite it, else -1. Crash-safe: the seal is a
     * roll and a sync ({@link DataStore#sealActive}); a crash before this run compacts the log leaves
     * an ordinary sealed log, which the next run takes by the ordinary rule.
     */
    private int sealIfSparse(LogArchive archive, int id, long durableLength, long live, double threshold) {
        long records = durableLength - DATA_LOG_HEADER_BYTES;
        if ((double) live / records >= threshold || !store.sealActive(id)) {
            return -1;
        }
        KillPoints.hit(KillPoints.COMPACTION_AFTER_SEAL);
        LOG.log(Level.INFO, () -> "sealed active data log " + id + " so that it can be compacted: " + live + " of " + records
                + " record bytes live");
        if (store.compactableBelow() <= id) {
            return -1; // the seal's sync did not move the durable point on (it failed and threw, or will be retried)
        }
        if (archive != null) {
            // compaction only rewrites uploaded logs; the seal's sync scheduled this one's upload
            try {
                archive.awaitUploads(UPLOAD_WAIT_MILLIS);
            } catch (IllegalStateException e) {
                LOG.log(Level.INFO, "data log " + id + " is not uploaded yet; a later compaction takes it: " + e.getMessage());
            }
            if (!archive.isUploaded(id)) {
                return -1;
            }
        }
        return id;
    }

    /** Deletes dead log {@code id}: with an archive its object and upload record too, crash-safe (see {@link LogArchive#retireLog}). */
    private void drop(LogArchive archive, int id) {
        if (archive == null) {
            store.dropLog(id);
        } else {
            archive.retireLog(id, () -> store.dropLog(id));
        }
    }

    /** The size of sealed log {@code id}: its file's, or with an archive its object's when the cache evicted the file. */
    private static long logSize(LogArchive archive, int id, Path p) {
        if (archive != null && !Files.exists(p)) {
            return archive.uploadedSize(id);
        }
        return size(p);
    }

    /**
     * The file to copy log {@code id}'s records from: its own, or, with an archive when the cache
     * evicted it, a download of its object ({@code L.source.compact}: a crash leaves it to the
     * {@code .compact} cleanup at start, and the run deletes it after the copy).
     */
    private Path source(LogArchive archive, int id, Path p) {
        if (archive == null || Files.exists(p)) {
            return p;
        }
        Path fetched = store.dir().resolve(DataLog.fileName(id) + SOURCE_SUFFIX);
        archive.downloadUploaded(id, fetched);
        return fetched;
    }

    /** Completes or discards what a crash left; runs before a store opens. */
    public static void finishInterrupted(Path dataDir, MetadataDb db) {
        if (!Files.isDirectory(dataDir)) {
            return;
        }
        long intent = db.metaLong(META_INTENT, -1);
        if (intent >= 0) {
            Path log = dataDir.resolve(DataLog.fileName((int) intent));
            Path tmp = dataDir.resolve(DataLog.fileName((int) intent) + SUFFIX);
            // hasEntry, not Files.exists: a failure to look must not clear the intent and then delete the copy below
            if (hasEntry(tmp)) {
                if (!Files.isRegularFile(tmp, LinkOption.NOFOLLOW_LINKS)) {
                    throw new StoreException(STORE, tmp.toString(), META_INTENT, "the interrupted compaction of " + log
                            + " left " + tmp + ", which is not a regular file (a compaction writes only regular files), so it"
                            + " is not renamed over the log and the store does not open; move it out of the data directory"
                            + " and start again", null);
                }
                LOG.log(Level.INFO, "finishing the interrupted compaction of {0}", log);
                move(tmp, log);
                DataLog.forceDirectory(dataDir);
            } else {
                LOG.log(Level.INFO, "clearing the intent of the interrupted compaction of {0}: its switch was complete", log);
            }
            clearIntent(db);
        }
        try (Stream<Path> s = Files.list(dataDir)) {
            for (Path p : s.filter(p -> p.getFileName().toString().endsWith(SUFFIX)).toList()) {
                LOG.log(Level.INFO, "discarding {0}: its compaction was interrupted before the switch", p);
                DataLog.deleteFile(p);
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, dataDir.toString(), null, e);
        }
    }

    static void clearIntent(MetadataDb db) {
        try (MetadataBatch batch = new MetadataBatch()) {
            db.delete(batch, db.handle(MetadataDb.Column.META), MetadataDb.bytes(META_INTENT));
            db.write(batch, true);
        }
    }

    static void move(Path from, Path to) {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw StoreException.translate(STORE, to.toString(), null, e);
        }
    }

    private static void checkThreshold(double threshold) {
        CompactionThreshold.check(threshold, t -> "compaction threshold must be in 0..1: " + t);
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw StoreException.translate(STORE, p.toString(), null, e);
        }
    }

    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a stray .compact file is removed when the store next opens
        }
    }
}
