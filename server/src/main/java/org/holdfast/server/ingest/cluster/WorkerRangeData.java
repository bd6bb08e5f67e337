package org.holdfast.server.ingest.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.server.store.CatalogPeek;
import org.holdfast.server.store.DataLogsInBucket;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.DeleteLease;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.TakeoverCheck;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;

/**
 * A worker's store of the blocks of its PBN range (data on workers): a {@link DataStore} over the
 * range its master assigned, with its own metadata database, in {@code <data-dir>/range-data}
 * ({@code data/} and {@code catalog/} below it). Opened at the first registration that needs it and
 * kept across reconnections over the same range; a directory created for another range is refused
 * by the data store (it is another node's), and that refusal is what every request then hears. The
 * worker process owns it and closes it after its links.
 *
 * <p>With an object store ({@link Archive}, backend s3) the store archives its sealed logs under the
 * worker's id and takeover epoch ({@link WorkerKeys}), a sync waits until every sealed log is in the
 * bucket, and a node that registers as the worker on an empty directory takes the range over from
 * the bucket ({@link RangeTakeover}).
 */
public final class WorkerRangeData implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(WorkerRangeData.class.getName());
    /** Its directory's name in the worker's data directory. */
    public static final String DIRECTORY = "range-data";

    /**
     * Backend s3 for a worker's range store: how to open the object store (once per store opened; the
     * store's archive closes it), the local cache of logs and ranges, and how long a sync waits while
     * no upload gets through ({@code holdfast.store.s3.upload-stall-timeout}).
     */
    public record Archive(Supplier<ObjectStore> open, LogCache.Settings cache, Duration stall) {
    }

    private final Path dir;
    private final DataStore.Settings settings;
    private final Archive archive;
    private final RangeEpochs epochs;
    // from the registration: the key space of the range's objects
    private volatile long workerId;
    // counted by each registration and each registered link's end: a takeover claims only if none came during its read
    private final AtomicLong links = new AtomicLong();
    // set by each registration: an open archiving store checks once that no node took its range over since
    private volatile boolean fenceCheckDue;
    // from the registration (cluster version 5): no PBN below it is handed out, 0 if the master named none
    private volatile long pbnFloor;
    private volatile boolean floorDue; // set by each registration: an open store skips to its floor once
    // the epoch the range data archives at as last known without the lock: -1 until read (REGISTER and the heartbeat need it)
    private volatile long knownEpoch = -1;
    private LogArchive logArchive;
    // the archive deletes from the bucket only while the master heard this node recently (MasterLease)
    private volatile DeleteLease deleteLease = DeleteLease.NOT_NEEDED;
    private long epoch;
    private MetadataDb db;
    // volatile: the heartbeat reads them without the lock, which a store being opened holds
    private volatile DataStore store;
    private PbnRange range;
    private volatile RuntimeException refusal;
    private boolean refusalReported;
    private boolean closed;
    // a takeover asks it for the master's records of the worker's sealed logs (TakeoverCheck)
    private volatile LongFunction<SealedLogs> takeoverRecords = id -> SealedLogs.NONE;
    // holdfast.cluster.takeover-check: sha256 (true) reads every recorded log before the claim, size only checks sizes
    private volatile boolean takeoverSha256 = true;
    // the heartbeat's figures, measured off the event loop
    private final RangeDataFigures figures;

    /**
     * A store in {@code dir} ({@code <data-dir>/range-data}) with {@code settings} (their directory and
     * range are replaced: the logs go to {@code dir/data}, the range comes from the registration).
     */
    public WorkerRangeData(Path dir, DataStore.Settings settings) {
        this(dir, settings, null);
    }

    /** As {@link #WorkerRangeData(Path, DataStore.Settings)}, archiving to {@code archive} (null: local only). */
    public WorkerRangeData(Path dir, DataStore.Settings settings, Archive archive) {
        this.dir = dir;
        this.settings = settings;
        this.archive = archive;
        this.epochs = new RangeEpochs(dir);
        this.figures = new RangeDataFigures(dir.resolve("data"), () -> store, () -> refusal != null);
    }

    /** The worker id the master registered this node as: an archiving store keys its objects by it. */
    public void identify(long id) {
        identify(id, 0);
    }

    /**
     * As {@link #identify(long)}, with the lowest PBN the store may hand out ({@code pbnFloor} of
     * REGISTERED, 0 or less: none): past every PBN the master heard this worker id hand out, so a
     * node that took the range over never names a second block with one of them.
     */
    public void identify(long id, long pbnFloor) {
        workerId = id;
        links.incrementAndGet();
        this.pbnFloor = Math.max(0, pbnFloor);
        floorDue = true;
        fenceCheckDue = true; // a link back after a silence: another node may have taken the range over meanwhile
    }

    /** The registered link to the master ended: a takeover reading now claims nothing ({@link TakeoverLinkLostException}). */
    public void unlinked() {
        links.incrementAndGet();
    }

    /**
     * The takeover epoch this node's range data archives at, for REGISTER and the heartbeat (0: none
     * recorded, a local store, or an empty directory that has not taken its range over yet). Never
     * waits for the store's lock: before the store first opens it reads the catalog's record once,
     * opened read-only (a catalog that cannot be read just now counts as none).
     */
    public long archiveEpoch() {
        long e = knownEpoch;
        if (e >= 0) {
            return e;
        }
        if (archive == null || !Files.isDirectory(dir.resolve("catalog"))) {
            knownEpoch = 0;
            return 0;
        }
        try {
            // read-only: takes no lock, so a store opening on the data lane meanwhile is never refused for it
            e = CatalogPeek.recordedEpoch(dir.resolve("catalog"));
        } catch (RuntimeException ex) {
            return 0; // unreadable just now: the store's open sets it
        }
        knownEpoch = e;
        return e;
    }

    /** As {@link #archiveEpoch()}, but never reads the disk: 0 until known (the heartbeat, on the link's event loop). */
    public long knownArchiveEpoch() {
        return Math.max(knownEpoch, 0);
    }

    /**
     * Where a takeover of the range (a store opened on an empty directory while the bucket holds the
     * worker's logs) gets the master's records of the worker's sealed logs, to check each log it adopts
     * ({@link TakeoverCheck}); asked only then, from the claiming thread. Unset, or answering
     * {@link SealedLogs#NONE}: the takeover adopts the bucket's logs unchecked, and logs so.
     */
    public void checkTakeoversAgainst(LongFunction<SealedLogs> records) {
        takeoverRecords = records;
    }

    /**
     * Whether a takeover reads every log the master holds a record of through SHA-256 before it claims
     * its epoch ({@code holdfast.cluster.takeover-check=sha256}, the default: one read of the range), or
     * checks their sizes only then ({@code size}): a log altered at its sealed size is then found after
     * the claim, when the old worker is fenced already.
     */
    public void checkTakeoverContent(boolean sha256) {
        takeoverSha256 = sha256;
    }

    /** Whether the store archives its logs to an object store. */
    public boolean archived() {
        return archive != null;
    }

    /**
     * Stores opened from now on (set it before the first claim) delete bucket objects only while
     * {@code lease} is held: another node may take the range over once the master declared this
     * one lost (see {@link MasterLease}).
     */
    public void leaseDeletes(DeleteLease lease) {
        deleteLease = lease;
    }

    /** The takeover epoch the open store archives under (0: none open, or a local store). */
    public synchronized long epoch() {
        return epoch;
    }

    /**
     * A commit's durable point on this worker: syncs {@code s}; an archiving store also seals its active
     * log and waits until every sealed log is confirmed in the bucket ({@link DataLogsInBucket}), so
     * every block a committed snapshot names here is in the bucket. Past the stall time the sync fails.
     */
    public void sync(DataStore s) {
        if (archive == null || s.archive() == null) {
            s.sync();
            return;
        }
        RangeDataBucketSync.sync(s, archive.stall(), dir);
    }

    /** Its directory. */
    public Path dir() {
        return dir;
    }

    /**
     * The store over {@code r}: opened now unless it is open over {@code r} already (a store open over
     * another range is closed first).
     *
     * @throws RuntimeException the store's refusal (a directory recorded for another range, say), also for later calls over {@code r}
     */
    public synchronized DataStore claim(PbnRange r) {
        if (closed) {
            throw new IllegalStateException("the worker's range data in " + dir + " is closed: the worker is stopping");
        }
        if (r.equals(range)) {
            if (refusal != null) {
                throw refusal;
            }
            if (fenceCheckDue && logArchive != null) {
                checkNotTakenOver();
            }
            if (floorDue) {
                skipToFloor(store);
            }
            return store;
        }
        closeStore();
        range = r;
        MetadataDb[] opened = new MetadataDb[1];
        ObjectStore objects = null;
        LogArchive a = null;
        DataStore s = null;
        try {
            DataStore.Settings ds = new DataStore.Settings(dir.resolve("data"), settings.rollBytes(), settings.fsync(),
                    settings.pbnReserveBatch(), settings.minFreeBytes(), r);
            long e = 0;
            if (archive == null) {
                s = DataStore.open(ds, openDb(opened));
            } else {
                long id = workerId;
                if (id <= 0) {
                    throw new IllegalStateException("the range store archives under its worker id, which the master has not given yet");
                }
                objects = archive.open().get();
                long reg = links.get();
                DeleteLease lease = deleteLease;
                // the link held through the read: it did not end, no registration since, and the master heard this node within lost-after / 2
                e = epochs.atOpen(id, r, objects, () -> openDb(opened), takeoverRecords, takeoverSha256,
                        () -> links.get() == reg && lease.safeNanos(id) > 0); // deletes late uploads too
                a = LogArchive.forKeySpace(objects, WorkerKeys.space(id, e), archive.cache());
                // before the store opens: its start resumes interrupted deletes
                a.leaseDeletes(new TakeoverFencedLease(deleteLease, id, e, objects));
                objects = null; // the archive closes it
                s = DataStore.open(ds, opened[0], a);
                if (RangeTakeover.storedEpoch(opened[0], id) == 0) {
                    try (MetadataBatch b = new MetadataBatch()) {
                        RangeTakeover.recordEpoch(opened[0], b, id, e);
                        opened[0].write(b, true);
                    }
                }
            }
            skipToFloor(s);
            db = opened[0];
            store = s;
            logArchive = a;
            epoch = e;
            knownEpoch = e;
            fenceCheckDue = false; // archivedEpoch checked the bucket just now
            figures.measureNow(); // on the claiming thread (the link's data lane), not the event loop
            return s;
        } catch (RuntimeException e) {
            if (s != null) {
                // a failed floor skip or epoch record must not leak the open store and its logs
                try {
                    s.close();
                } catch (RuntimeException ce) {
                    e.addSuppressed(ce); // its catalog refuses the close's writes too: closed again below, after the catalog
                }
            }
            if (a != null) {
                a.close();
            } else if (objects != null) {
                objects.close();
            }
            if (opened[0] != null) {
                opened[0].close();
            }
            if (s != null) {
                s.close(); // idempotent; with its catalog closed it only closes its logs
            }
            if (e instanceof TakeoverLinkLostException) {
                range = null; // not kept: the next call takes the range over again
            } else {
                refusal = e;
            }
            figures.notServingNow();
            throw e;
        }
    }

    /** Skips {@code s}'s next PBN up to the registration's floor (nothing if it is there already). */
    private void skipToFloor(DataStore s) {
        floorDue = false;
        long floor = pbnFloor;
        if (floor > 0 && s.nextPbn() < floor) {
            long was = s.nextPbn();
            s.skipTo(Math.min(floor, range.limit()));
            LOG.log(System.Logger.Level.WARNING, "the range store in {0} would have handed out PBN {1}, but the master heard worker {2}"
                    + " hand out PBNs up to {3} (a node that held the range before, whose last blocks never reached this store):"
                    + " PBNs from {1} skipped to {4}, so none names two blocks", dir, Long.toString(was), Long.toString(workerId),
                    Long.toString(floor - 1), Long.toString(floor));
        }
    }

    /**
     * The open store kept across a new registration: refused (closed, as at open) if the bucket holds
     * a later epoch of the worker, i.e. another node took the range over while this one was away; a
     * bucket that cannot be listed fails this call and the next one checks again.
     */
    private void checkNotTakenOver() {
        StoreException takenOver;
        try (ObjectStore objects = archive.open().get()) {
            takenOver = epochs.fence(workerId, epoch, objects); // one listing: late uploads deleted from it too
        }
        fenceCheckDue = false;
        if (takenOver != null) {
            PbnRange kept = range;
            closeStore();
            range = kept; // later calls over it hear the refusal, as after a refused open
            refusal = takenOver;
            figures.notServingNow();
            throw refusal;
        }
    }

    private MetadataDb openDb(MetadataDb[] into) {
        // the fsync policy rules the catalog's commits as on a standalone node's (CoreConfiguration)
        into[0] = MetadataDb.open(dir.resolve("catalog"), List.of(), settings.fsync().forces());
        return into[0];
    }

    /**
     * True once per refusal of the store (the first caller that asks logs it; a worker that reconnects
     * over the same range does not log it again).
     */
    public synchronized boolean reportRefusal() {
        if (refusal == null || refusalReported) {
            return false;
        }
        refusalReported = true;
        return true;
    }

    /**
     * What the worker's heartbeat reports (cluster version 3): serving with the next PBN and the
     * bytes of the data logs on disk, refused, or not open yet. Never waits: it runs on the link's
     * event loop, which a store stuck in an append's fsync (or a slow disk listing) must not stall
     * (its dedup answers and heartbeats would stop, and the master would declare the worker lost).
     * It returns the figures measured last (at open, or after the previous heartbeat: they lag one
     * heartbeat interval) and has them measured again on a thread of their own.
     */
    public Heartbeat.RangeData report() {
        return figures.report();
    }

    /** The store open now, or null. */
    public synchronized DataStore store() {
        return store;
    }

    private void closeStore() {
        if (store != null) {
            store.close();
            store = null;
        }
        if (logArchive != null) {
            logArchive.close();
            logArchive = null;
        }
        epoch = 0;
        if (db != null) {
            db.close();
            db = null;
        }
        range = null;
        refusal = null;
        refusalReported = false;
    }

    @Override
    public synchronized void close() {
        closed = true;
        figures.close();
        closeStore();
    }
}
