package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.object.ObjectStore;

/**
 * Fencing and takeover of a worker's range in the object store (data on workers, backend s3;
 * docs/architecture.md "Objects and fencing"). A range store writes its sealed logs under its worker
 * id and takeover epoch ({@link WorkerKeys}). A node that starts with the worker's id on an empty
 * {@code range-data} directory {@link #plan plans} from one listing of the worker's keys: no object,
 * epoch 1 and nothing to adopt; else the highest epoch found plus one, adopting the logs of that
 * epoch and those its marker adopted (never the logs an older node uploaded under an older epoch
 * after it was taken over). It {@link #claim claims} the epoch by writing its marker create-only
 * (an existing marker means another node took the range over at that epoch: refused), then
 * {@link #adopt adopts}: the location index, upload records and PBN reservation of a new store are
 * built from the adopted logs (each downloaded once, its blocks hashed, as records carry PBNs but no
 * fingerprints); the store then reads them by range from the bucket and writes new logs under its
 * own epoch.
 */
public final class RangeTakeover {
    private static final System.Logger LOG = System.getLogger(RangeTakeover.class.getName());
    private static final String STORE = "range-takeover";
    /** Meta key of the worker id the range store archives under (written once, with the epoch). */
    static final String META_WORKER = "store.object.worker";
    /** Meta key of the takeover epoch the range store archives under. */
    static final String META_EPOCH = "store.object.epoch";
    /** Locations per unsynced write while adopting (bounds memory; the synced batch at the end makes the store). */
    private static final int BATCH = 10_000;

    /** A takeover's plan: the epoch to write under and the object keys of the logs it adopts (empty at epoch 1). */
    public record Plan(long worker, long epoch, List<String> adopted) {
        public Plan {
            adopted = List.copyOf(adopted);
        }
    }

    /** What an adoption built: logs adopted, blocks indexed, the store's new active log and its next PBN. */
    public record Report(int logs, long blocks, int newLogId, long nextPbn) {
    }

    private RangeTakeover() {
    }

    /** Plans the takeover of worker {@code worker}'s range from the bucket (one listing, and one read of the newest marker). */
    public static Plan plan(long worker, ObjectStore objects) {
        return plan(worker, objects.list(WorkerKeys.prefix(worker)), key -> readMarker(objects, key));
    }

    /**
     * Plans from {@code listing} (keys under {@link WorkerKeys#prefix}; others, and keys of no epoch, are
     * ignored), reading a marker through {@code read}. A damaged or missing marker of the newest epoch
     * (above 1) is refused: whoever took over last cannot be known.
     */
    static Plan plan(long worker, List<String> listing, Function<String, byte[]> read) {
        long newest = highestEpoch(worker, listing);
        if (newest < 1) {
            return new Plan(worker, 1, List.of());
        }
        Set<String> listed = new HashSet<>(listing);
        List<String> candidates = new ArrayList<>();
        if (newest > 1) {
            String markerKey = WorkerKeys.marker(worker, newest);
            if (!listed.contains(markerKey)) {
                throw new CorruptDataException(STORE, markerKey, null, "worker " + worker + " has objects at epoch " + newest
                        + " but no adopted marker there, which a takeover writes before anything else: the bucket holds objects this"
                        + " code did not write under " + WorkerKeys.space(worker, newest) + "/; nothing was taken over or written."
                        + " Move them away (or restore the marker) and start again");
            }
            for (String k : AdoptedMarker.parse(worker, newest, markerKey, read.apply(markerKey)).logs()) {
                if (listed.contains(k)) { // a log the newest owner deleted (freed whole, or replaced by a compacted copy) is gone
                    candidates.add(k);
                }
            }
        }
        for (String k : listing) {
            if (WorkerKeys.epochOf(worker, k) == newest && WorkerKeys.log(worker, newest, k) != null) {
                candidates.add(k);
            }
        }
        // per log id the newest copy: a compaction uploads its copy under a later log epoch, then deletes the old one
        TreeMap<Integer, long[]> best = new TreeMap<>();
        TreeMap<Integer, String> keys = new TreeMap<>();
        for (String k : candidates) {
            long e = WorkerKeys.epochOf(worker, k);
            long[] ide = WorkerKeys.log(worker, e, k);
            long[] had = best.get((int) ide[0]);
            if (had == null || ide[1] > had[1]) {
                best.put((int) ide[0], ide);
                keys.put((int) ide[0], k);
            }
        }
        return new Plan(worker, newest + 1, new ArrayList<>(keys.values()));
    }

    /** The highest epoch any key of worker {@code worker} in {@code listing} lies under, or 0 for none. */
    public static long highestEpoch(long worker, List<String> listing) {
        long newest = 0;
        for (String k : listing) {
            newest = Math.max(newest, WorkerKeys.epochOf(worker, k));
        }
        return newest;
    }

    /** The highest epoch of worker {@code worker} in the bucket (one listing), or 0 for none. */
    public static long highestEpoch(long worker, ObjectStore objects) {
        return highestEpoch(worker, objects.list(WorkerKeys.prefix(worker)));
    }

    static byte[] readMarker(ObjectStore objects, String key) {
        OptionalLong size = objects.size(key);
        if (size.isEmpty()) {
            return new byte[0]; // deleted since the listing: refused as damaged
        }
        if (size.getAsLong() > AdoptedMarker.MAX_BYTES) {
            return new byte[0];
        }
        return size.getAsLong() == 0 ? new byte[0] : objects.getRange(key, 0, (int) size.getAsLong());
    }

    /**
     * Claims {@code plan}'s epoch by writing its marker create-only, before anything else of the
     * epoch; epoch 1 too (a marker adopting nothing), so two fresh nodes of one worker on an empty
     * bucket meet there as two takeovers do. Refused with {@link RangeTakenOverException} if the
     * marker exists: another node claimed the range at that epoch.
     */
    public static void claim(Plan plan, ObjectStore objects, Path scratch) {
        if (plan.epoch() < 1) {
            throw new IllegalArgumentException("epochs start at 1, got " + plan.epoch());
        }
        String key = WorkerKeys.marker(plan.worker(), plan.epoch());
        Path file = scratch.resolve("adopted-marker");
        try {
            Files.createDirectories(scratch);
            Files.write(file, new AdoptedMarker(plan.worker(), plan.epoch(), plan.adopted()).format());
            if (!objects.putIfAbsent(key, file)) {
                throw new RangeTakenOverException(plan.worker(), plan.epoch(), key);
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, file.toString(), null, e);
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a scratch file of the range-data directory
            }
        }
    }

    /**
     * Builds a new range store over {@code range} in {@code logDir} with catalog {@code db} (both empty)
     * from {@code plan}'s adopted logs: every block's location (its PBN must lie in {@code range}),
     * each log's upload record naming its object, the PBN reservation past every PBN found, a new
     * active log past every adopted id, and the worker id and epoch; the last write is synced and
     * makes the store, so a crash before it leaves no store (only locations nothing opens).
     */
    public static Report adopt(Plan plan, Path logDir, MetadataDb db, PbnRange range, ObjectStore objects, Path scratch) {
        return adopt(plan, logDir, db, range, objects, scratch, SealedLogs.NONE);
    }

    /**
     * As {@link #adopt(Plan, Path, MetadataDb, PbnRange, ObjectStore, Path)}, each downloaded log checked
     * against the master's {@code records} ({@link TakeoverCheck}): one that is not what the worker sealed
     * refuses the takeover before the write that makes the store.
     */
    public static Report adopt(Plan plan, Path logDir, MetadataDb db, PbnRange range, ObjectStore objects, Path scratch,
                               SealedLogs records) {
        return build(plan, logDir, db, range, objects, scratch, null, null, null, records);
    }

    /** After each log indexed: logs done of {@code total}, bytes downloaded so far and the nanoseconds since the first. */
    @FunctionalInterface
    interface Progress {
        void logIndexed(int done, int total, long bytes, long nanos);
    }

    /**
     * What {@link #adopt} does, shared with a master's read-only {@link RangeCopy}. A record that fails its
     * check is not indexed; once every log is, a PBN another log holds a good record of is not damaged
     * ({@link AdoptedDamage}). Each PBN left goes to {@code damaged} if non-null (the copy reports it when
     * read); with {@code damaged} null they refuse the build before the write that makes the store.
     * {@code progress} (or null) hears of each log.
     */
    static Report build(Plan plan, Path logDir, MetadataDb db, PbnRange range, ObjectStore objects, Path scratch,
                        LogBlocks.Damaged damaged, Progress progress) {
        return build(plan, logDir, db, range, objects, scratch, damaged, progress, null);
    }

    /**
     * A read-only copy that serves reads while it is built: the store is made (every log's upload
     * record, the range, a durable point) before the first download, so a block is readable as soon
     * as its log is indexed; a takeover makes it last, so a crash leaves no half-built store.
     */
    interface Readable {
        /** The store is made and holds no location yet: reads may start. */
        void opened();

        /** Whether a downloaded log of {@code bytes} stays in the store's directory for reads, else they fetch its ranges again. */
        boolean keep(long bytes);

        /** Whether the downloaded object {@code file} of log {@code key} is refused (not indexed: its blocks are unavailable). */
        default boolean refuse(String key, Path file) {
            return false;
        }
    }

    /** As {@link #build(Plan, Path, MetadataDb, PbnRange, ObjectStore, Path, LogBlocks.Damaged, Progress)}; {@code readable} non-null: see {@link Readable}. */
    static Report build(Plan plan, Path logDir, MetadataDb db, PbnRange range, ObjectStore objects, Path scratch,
                        LogBlocks.Damaged damaged, Progress progress, Readable readable) {
        return build(plan, logDir, db, range, objects, scratch, damaged, progress, readable, SealedLogs.NONE);
    }

    private static Report build(Plan plan, Path logDir, MetadataDb db, PbnRange range, ObjectStore objects, Path scratch,
                                LogBlocks.Damaged damaged, Progress progress, Readable readable, SealedLogs sealed) {
        if (DurablePoint.read(db, STORE) != null) {
            throw new IllegalStateException("the range store in " + logDir + " exists: a takeover builds an empty one");
        }
        LocationIndex locations = new LocationIndex(db);
        long[] highest = {range.first() - 1};
        long[] blocks = {0};
        int maxLog = 0;
        Map<Integer, long[]> records = new TreeMap<>();
        try {
            Files.createDirectories(logDir);
            Files.createDirectories(scratch);
        } catch (IOException e) {
            throw StoreException.translate(STORE, logDir.toString(), null, e);
        }
        for (String key : plan.adopted()) {
            long e = WorkerKeys.epochOf(plan.worker(), key);
            long[] ide = WorkerKeys.log(plan.worker(), e, key);
            records.put((int) ide[0], new long[] {e, ide[1]});
            maxLog = Math.max(maxLog, (int) ide[0]);
        }
        int newLog = maxLog + 1;
        // a takeover records each adopted object's digest, as its uploads would have: its sealed-log report names them
        Map<Integer, SealedDigests.Digest> digests = new TreeMap<>();
        if (readable != null) {
            makeStore(plan, logDir, db, range, records, digests, newLog, range.first());
            readable.opened();
        }
        AdoptedDamage damage = new AdoptedDamage();
        long t0 = System.nanoTime();
        long bytes = 0;
        int done = 0;
        for (String key : plan.adopted()) {
            long[] ide = WorkerKeys.log(plan.worker(), WorkerKeys.epochOf(plan.worker(), key), key);
            int logId = (int) ide[0];
            Path copy = scratch.resolve("adopt-" + String.format("%08x", logId) + ".hfl");
            objects.download(key, copy);
            if (readable == null) {
                SealedDigests.Digest d = SealedDigests.of(copy, ide[1]);
                String why = sealed.mismatch(key, d.size(), d.sha256());
                if (why != null) {
                    deleteScratch(copy);
                    throw TakeoverCheck.refusal(plan.worker(), why, "the store was not made");
                }
                digests.put(logId, d);
            }
            if (readable != null && readable.refuse(key, copy)) {
                deleteScratch(copy);
                if (progress != null) {
                    progress.logIndexed(++done, plan.adopted().size(), bytes, System.nanoTime() - t0);
                }
                continue;
            }
            Path file = copy;
            if (readable != null && readable.keep(copy.toFile().length())) {
                // the copy reads this log from here, not by range from the bucket: no second transfer
                file = logDir.resolve(DataLog.fileName(logId));
                try {
                    Files.move(copy, file);
                } catch (IOException ex) {
                    throw StoreException.translate(STORE, file.toString(), null, ex);
                }
            }
            MetadataBatch[] batch = {new MetadataBatch()};
            int[] inBatch = {0};
            damage.log(key);
            try {
                long end = LogBlocks.walk(file, (pbn, offset, lengthField, fp) -> {
                    if (!range.contains(pbn)) {
                        throw new CorruptDataException(STORE, key, "pbn " + pbn, "the adopted log holds a PBN outside the worker's range "
                                + range + ": it is not this range's log; nothing was taken over");
                    }
                    locations.put(batch[0], pbn, logId, offset, lengthField, fp, 0);
                    highest[0] = Math.max(highest[0], pbn);
                    blocks[0]++;
                    if (++inBatch[0] == BATCH) {
                        db.write(batch[0], false);
                        batch[0].close();
                        batch[0] = new MetadataBatch();
                        inBatch[0] = 0;
                    }
                }, damage);
                long size = file.toFile().length();
                if (end < size) {
                    // a sealed log ends with a whole record (LogBlocks.walk): the rest is there but unreadable
                    if (damaged == null) {
                        throw AdoptedDamage.unreadTail(key, end, size, plan.epoch());
                    }
                    LOG.log(System.Logger.Level.ERROR, "bucket copy of worker " + plan.worker() + ": " + key + ": "
                            + AdoptedDamage.unreadTail(end, size) + "; the blocks stored there are unavailable in this copy."
                            + " Put a good copy of that log object back in the bucket, or start the worker's node again");
                }
                db.write(batch[0], false);
                bytes += size;
            } finally {
                batch[0].close();
                deleteScratch(copy);
            }
            if (progress != null) {
                progress.logIndexed(++done, plan.adopted().size(), bytes, System.nanoTime() - t0);
            }
        }
        if (!damage.settle(locations)) {
            if (damaged == null) {
                throw damage.refusal(plan.worker(), plan.epoch());
            }
            damage.reportTo(damaged);
        }
        if (readable == null) {
            makeStore(plan, logDir, db, range, records, digests, newLog, highest[0] + 1);
        }
        return new Report(records.size(), blocks[0], newLog, highest[0] + 1);
    }

    private static void deleteScratch(Path copy) {
        try {
            Files.deleteIfExists(copy);
        } catch (IOException ignored) {
            // a scratch file of the range-data directory
        }
    }

    /**
     * Writes what makes the store (synced, last): a new active log {@code newLog}, each log's upload record
     * from {@code records} (log id to epoch and log epoch) and its digest from {@code digests} (if there), the range, the durable point, the PBN reservation
     * {@code nextPbn} and the worker's epoch.
     */
    private static void makeStore(Plan plan, Path logDir, MetadataDb db, PbnRange range, Map<Integer, long[]> records,
                                  Map<Integer, SealedDigests.Digest> digests, int newLog, long nextPbn) {
        DataLog.create(logDir, newLog, System.currentTimeMillis()).close(); // before the durable point that names it
        try (MetadataBatch b = new MetadataBatch()) {
            for (Map.Entry<Integer, long[]> r : records.entrySet()) {
                db.put(b, MetadataDb.Column.META, MetadataDb.bytes(UploadRecords.uploadedKey(r.getKey())),
                        UploadRecords.uploadRecord(r.getValue()[1], WorkerKeys.space(plan.worker(), r.getValue()[0])));
                SealedDigests.Digest d = digests.get(r.getKey());
                if (d != null) {
                    SealedDigests.put(db, b, r.getKey(), d);
                }
            }
            StoreRange.record(db, b, range);
            byte[] point = new byte[12];
            Bytes.putInt(point, 0, newLog);
            Bytes.putLong(point, 4, DATA_LOG_HEADER_BYTES);
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes(FormatVersions.META_DURABLE_POINT), point);
            db.putMetaLong(b, FormatVersions.META_PBN_RESERVED, nextPbn);
            recordEpoch(db, b, plan.worker(), plan.epoch());
            db.write(b, true);
        }
    }

    /** Puts worker {@code worker} and {@code epoch} into {@code b}: what the range store archives under from now on. */
    public static void recordEpoch(MetadataDb db, MetadataBatch b, long worker, long epoch) {
        db.putMetaLong(b, META_WORKER, worker);
        db.putMetaLong(b, META_EPOCH, epoch);
    }

    /** The epoch catalog {@code db} records for its range store, whichever worker it names, or 0 if none. */
    public static long recordedEpoch(MetadataDb db) {
        return db.metaLong(META_EPOCH, 0);
    }

    /** The epoch the range store of catalog {@code db} archives under, or 0 if it records none (a store made before backend s3). */
    public static long storedEpoch(MetadataDb db, long worker) {
        long w = db.metaLong(META_WORKER, 0);
        long e = db.metaLong(META_EPOCH, 0);
        if (e != 0 && w != worker) {
            throw new StoreException(STORE, db.path(), META_WORKER, "this range-data directory archives as worker " + w + ", but the"
                    + " master registered this node as worker " + worker + ": it belongs to another worker; move it away and start"
                    + " again (a node on an empty range-data takes its worker's range over from the bucket)", null);
        }
        return e;
    }
}
