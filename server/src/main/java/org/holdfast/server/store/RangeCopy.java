package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.stream.Stream;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreUnavailableException;

/**
 * A read-only copy of a lost worker's range, made by a data-on-workers master from the bucket so that
 * restore, verify and the image API can read the blocks while no node serves the range
 * (docs/architecture.md "Reading a dead worker's blocks"). It is built as a takeover builds a store
 * ({@link RangeTakeover#build}: the logs of the newest epoch and those its marker adopted, each
 * downloaded once, checked and hashed), but claims nothing: no marker, no epoch, nothing written to
 * the bucket. Its location index lives in a scratch directory; blocks are read by range from the
 * bucket and checked as any archived store's reads are.
 *
 * <p>It holds what the bucket held when it was made: a PBN it does not index is unavailable (the
 * worker may have stored it after the last upload this copy saw), never absent. A block whose record
 * failed its check while the copy was made is damaged, and its bytes are never returned.
 */
public final class RangeCopy implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RangeCopy.class.getName());
    private static final byte[] NO_FINGERPRINT = new byte[Fingerprint.BYTES];

    private final long worker;
    private final long epoch;
    private final PbnRange range;
    private final Path dir;
    private final MetadataDb db;
    private final LogArchive archive;
    private final DataStore store;
    private final Map<Long, String> damaged;
    private final String holder;
    // reads hold it shared; close takes it alone, so a copy dropped while its worker came back waits for the reads in flight
    private final ReentrantReadWriteLock use = new ReentrantReadWriteLock();
    private boolean closed;

    private RangeCopy(long worker, long epoch, PbnRange range, Path dir, MetadataDb db, LogArchive archive, DataStore store,
                      Map<Long, String> damaged) {
        this.worker = worker;
        this.epoch = epoch;
        this.range = range;
        this.dir = dir;
        this.db = db;
        this.archive = archive;
        this.store = store;
        this.damaged = damaged;
        this.holder = "the bucket copy of worker " + worker + "'s range (" + WorkerKeys.space(worker, epoch) + "/, PBNs " + range + ")";
    }

    /**
     * Makes the copy of worker {@code worker}'s range {@code range} in {@code dir} (emptied first) from
     * {@code objects}, which the copy owns from now on (closed with it, or here if this fails). {@code space}
     * is the master's data disk reserve: the copy stops (and is deleted) before it would go below it, so
     * a lost worker's range never fills the disk the master's catalog lives on.
     *
     * @throws BlocksUnavailableException if the bucket holds no log of the worker, or the master's disk is at its reserve
     * @throws RuntimeException           what the bucket or the build failed with (nothing is left in {@code dir})
     */
    public static RangeCopy materialise(long worker, PbnRange range, ObjectStore objects, LogCache.Settings cache, Path dir,
                                        SpaceReserve space) {
        MetadataDb db = null;
        LogArchive archive = null;
        try {
            delete(dir);
            Files.createDirectories(dir);
            roomFor(space, worker, 0);
            RangeTakeover.Plan next = RangeTakeover.plan(worker, objects);
            long epoch = next.epoch() - 1;
            if (epoch < 1) {
                throw new BlocksUnavailableException("the bucket holds no object of worker " + worker + " (" + WorkerKeys.prefix(worker)
                        + "): its range was never archived (a worker without holdfast.store.backend=s3), or this master's"
                        + " holdfast.store.s3.bucket and prefix name another bucket than the worker's", null);
            }
            RangeTakeover.Plan plan = new RangeTakeover.Plan(worker, epoch, next.adopted());
            LOG.log(System.Logger.Level.WARNING, "worker {0} is lost: copying its range {1} read-only from the bucket ({2} sealed"
                    + " logs of {3}/ and earlier epochs) into {4}, so that restores and verify can read its blocks",
                    Long.toString(worker), range, plan.adopted().size(), WorkerKeys.space(worker, epoch), dir);
            Map<Long, String> damaged = new ConcurrentHashMap<>();
            long[] logs = {0, 0}; // bytes downloaded so far, the largest log's
            db = MetadataDb.open(dir.resolve("catalog"), List.of(), false);
            RangeTakeover.Report built = RangeTakeover.build(plan, dir.resolve("data"), db, range, objects, dir.resolve("scratch"),
                    damaged::put, (done, total, bytes, nanos) -> {
                        LOG.log(System.Logger.Level.INFO, "copying worker {0}''s range from the bucket: {1}/{2} logs, {3} MiB in {4} s ({5} MiB/s)",
                                Long.toString(worker), done, total, String.format("%.1f", bytes / 1048576.0),
                                String.format("%.1f", nanos / 1e9), String.format("%.1f", bytes / 1048576.0 / Math.max(nanos / 1e9, 1e-3)));
                        logs[1] = Math.max(logs[1], bytes - logs[0]);
                        logs[0] = bytes;
                        roomFor(space, worker, logs[1]); // the next log may be as large, and its index entries come on top
                    });
            archive = LogArchive.forKeySpace(objects, WorkerKeys.space(worker, epoch), cache);
            DataStore store = DataStore.openReadOnly(dir.resolve("data"), db, archive);
            LOG.log(System.Logger.Level.WARNING, "worker {0}''s range is readable from the bucket copy: {1} blocks in {2} logs{3}",
                    Long.toString(worker), built.blocks(), built.logs(), damaged.isEmpty() ? "" : "; " + damaged.size()
                            + " blocks failed their check and are reported damaged");
            return new RangeCopy(worker, epoch, range, dir, db, archive, store, damaged);
        } catch (IOException | RuntimeException e) {
            if (archive != null) {
                archive.close();
            } else {
                objects.close();
            }
            if (db != null) {
                db.close();
            }
            try {
                delete(dir);
            } catch (RuntimeException ignored) {
                // the next copy empties it first
            }
            throw e instanceof IOException io ? StoreException.translate("range-copy", dir.toString(), null, io) : (RuntimeException) e;
        }
    }

    /** Refuses, before the copy goes on, unless {@code bytes} more fit on the master's data disk above its reserve. */
    private static void roomFor(SpaceReserve space, long worker, long bytes) {
        try {
            space.require(bytes);
        } catch (StorageFullException e) {
            throw new BlocksUnavailableException("the copy of worker " + worker + "'s range from the bucket stopped (and was deleted)"
                    + " before it took the master's data disk below its reserve: " + e.getMessage(), e);
        }
    }

    /** The worker whose range this copies. */
    public long worker() {
        return worker;
    }

    /** The newest takeover epoch of the worker the copy was made at. */
    public long epoch() {
        return epoch;
    }

    /** The worker's PBN range. */
    public PbnRange range() {
        return range;
    }

    /** Blocks whose records failed their check while the copy was made (reported damaged when read). */
    public int damagedBlocks() {
        return damaged.size();
    }

    /**
     * Reads the run of {@code pbns[from..from+n)} in this range that the copy holds, at least one block,
     * as {@link DataStore#readBatch} does (every record checked).
     *
     * @throws DamagedBlockException      if {@code pbns[from]} failed its check (when the copy was made, or now)
     * @throws BlocksUnavailableException if the copy does not hold {@code pbns[from]}, or the bucket cannot be read now
     */
    public int readBatch(long[] pbns, int from, int n, BlockBatch into) {
        use.readLock().lock();
        try {
            if (closed) {
                throw new BlocksUnavailableException(holder + " was dropped just now (its worker registered again): read again", null);
            }
            return readOpen(pbns, from, n, into);
        } finally {
            use.readLock().unlock();
        }
    }

    private int readOpen(long[] pbns, int from, int n, BlockBatch into) {
        into.clear();
        int limit = from + Math.min(n, into.capacity());
        int end = from;
        while (end < limit && range.contains(pbns[end]) && !damaged.containsKey(pbns[end])) {
            end++;
        }
        String problem = damaged.get(pbns[from]);
        if (problem != null) {
            throw new DamagedBlockException(holder, pbns[from], NO_FINGERPRINT, problem);
        }
        long[] run = Arrays.copyOfRange(pbns, from, end);
        byte[] fps = new byte[run.length * Fingerprint.BYTES];
        boolean[] found = new boolean[run.length];
        held(run, run.length, fps, found);
        int have = 0;
        while (have < run.length && found[have]) {
            have++;
        }
        if (have == 0) {
            throw notHeld(pbns[from]);
        }
        try {
            return store.readBatch(pbns, from, have, into);
        } catch (CorruptBlockException e) {
            int k = (int) Math.max(0, Math.min(run.length - 1, indexOf(run, e.pbn())));
            throw new DamagedBlockException(holder, e.pbn(), Arrays.copyOfRange(fps, k * Fingerprint.BYTES, (k + 1) * Fingerprint.BYTES),
                    e.problem());
        } catch (ObjectStoreUnavailableException e) {
            throw new BlocksUnavailableException("the object store cannot be read now for " + holder + ": " + e.getMessage()
                    + "; the blocks are unreadable, not damaged: try again once the bucket answers", e);
        }
    }

    private void held(long[] run, int n, byte[] fps, boolean[] found) {
        store.fingerprints(run, n, fps, found, new boolean[n]);
    }

    private static long indexOf(long[] run, long pbn) {
        for (int i = 0; i < run.length; i++) {
            if (run[i] == pbn) {
                return i;
            }
        }
        return -1;
    }

    private BlocksUnavailableException notHeld(long pbn) {
        return new BlocksUnavailableException("PBN " + pbn + " is not in " + holder + ": the worker may have stored it after the"
                + " last upload the copy saw; it is unavailable, not absent, until the worker (or a replacement) registers again", null);
    }

    /** Closes the copy and deletes its directory. Idempotent. */
    @Override
    public void close() {
        use.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            store.close();
            archive.close(); // closes the object store
            db.close();
            delete(dir);
        } finally {
            use.writeLock().unlock();
        }
    }

    /** Deletes {@code dir} and everything below it, if it exists. */
    public static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw StoreException.translate("range-copy", dir.toString(), null, e);
        }
    }
}
