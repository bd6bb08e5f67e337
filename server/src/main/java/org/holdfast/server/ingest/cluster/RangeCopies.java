package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.SpaceReserve;

/**
 * A data-on-workers master's read-only copies of lost workers' ranges, from the bucket
 * ({@link RangeCopy}, one per worker in {@code <data-dir>/worker-ranges/w<id>}): made when a read
 * first needs a block of a worker that is not connected, and dropped when the worker (or a
 * replacement) is up again or registered since the copy was made (its membership epoch moved), so a
 * copy never outlives the range it copied. Copies are no workers: nothing here is a range store,
 * a GC link or a sweep, so the GC never counts or sweeps them. Directories a previous run left are
 * deleted at start, never trusted.
 */
public final class RangeCopies implements AutoCloseable {
    /** The copies' directory in the master's data directory. */
    public static final String DIRECTORY = "worker-ranges";

    private final RangeStores stores;
    private final Supplier<List<WorkerView>> workers;
    private final WorkerRangeData.Archive bucket;
    private final Path dir;
    private final SpaceReserve space;
    private final Duration grace;
    private final LongSupplier nanoTime;
    private final long startedNanos;
    // by worker id; a copy is made under its worker's lock in building: readers of that range wait, no others
    private final Map<Long, Held> copies = new ConcurrentHashMap<>();
    private final Map<Long, Object> building = new ConcurrentHashMap<>();
    private volatile boolean closed;
    // the master's records of each worker's sealed logs (cluster version 7), which a copy checks the bucket against
    private final LongFunction<SealedLogs> sealedLogs;

    private record Held(RangeCopy copy, long memberEpoch) {
    }

    /**
     * Copies of the lost workers among {@code workers} (the registry's list), read from {@code bucket}
     * (the master's own {@code holdfast.store.s3.*}; null: none configured, and a lost worker's blocks
     * stay unavailable), in {@code dir}; {@code stores} tells whether a worker is up. A copy stops before
     * it takes the disk below {@code space}'s reserve (the master's data store's). A worker is copied
     * only once it has been away {@code grace} (the registry's lost-after) since its last heartbeat
     * ({@link WorkerView#silentNanos}) and since now, whichever is later, on the monotonic {@code nanoTime}
     * (the registry's: a wall clock stepped forward must not shorten it): a link that drops and comes
     * back, or a worker not reconnected yet after the master started, must not cost a download of its
     * whole range.
     */
    public RangeCopies(RangeStores stores, Supplier<List<WorkerView>> workers, WorkerRangeData.Archive bucket, Path dir,
                       SpaceReserve space, Duration grace, LongSupplier nanoTime) {
        this(stores, workers, bucket, dir, space, grace, nanoTime, w -> SealedLogs.NONE);
    }

    /** As above, each copy checked against {@code sealedLogs}' records of its worker ({@link RangeCopy}). */
    public RangeCopies(RangeStores stores, Supplier<List<WorkerView>> workers, WorkerRangeData.Archive bucket, Path dir,
                       SpaceReserve space, Duration grace, LongSupplier nanoTime, LongFunction<SealedLogs> sealedLogs) {
        this.sealedLogs = sealedLogs;
        this.stores = stores;
        this.workers = workers;
        this.bucket = bucket;
        this.dir = dir;
        this.space = space;
        this.grace = grace;
        this.nanoTime = nanoTime;
        this.startedNanos = nanoTime.getAsLong();
        RangeCopy.delete(dir);
    }

    /**
     * The copy that serves {@code pbn}, whose worker is not up: made now if there is none, or the one
     * there was made before the worker registered again.
     *
     * @throws BlocksUnavailableException saying why the block cannot be read and what to do
     */
    RangeCopy copyFor(long pbn) {
        WorkerView w = null;
        for (WorkerView v : workers.get()) {
            if (v.range().contains(pbn)) {
                w = v;
                break;
            }
        }
        if (w == null) {
            throw new BlocksUnavailableException("PBN " + pbn + " lies in no registered worker's range (GET /api/v1/cluster):"
                    + " its blocks cannot be read", null);
        }
        String who = "data worker " + w.nodeName() + " (id " + w.workerId() + ", PBNs " + w.range() + ")";
        if (stores.up(w.workerId()) != null) {
            drop(w.workerId());
            throw new BlocksUnavailableException(who + " registered again just now: read again", null);
        }
        Held h = copies.get(w.workerId());
        if (usable(h, w)) {
            return h.copy();
        }
        long away = Math.min(w.silentNanos(), nanoTime.getAsLong() - startedNanos);
        if (bucket != null && away < grace.toNanos()) { // without a bucket make() says so at once
            throw new BlocksUnavailableException("PBN " + pbn + " lives on " + who + ", which is not connected (away "
                    + Duration.ofNanos(Math.max(away, 0)).toSeconds() + " s): its range is read from the bucket only once it has"
                    + " been away holdfast.cluster.lost-after (" + grace.toSeconds() + " s), so that a worker that reconnects"
                    + " costs no copy of its whole range; read again then (GET /api/v1/cluster)", null);
        }
        synchronized (building.computeIfAbsent(w.workerId(), id -> new Object())) {
            h = copies.get(w.workerId());
            if (usable(h, w)) {
                return h.copy(); // made by the reader this one waited for
            }
            drop(w.workerId()); // the worker registered since (what it wrote then is not in the copy), or the copy failed
            return make(pbn, w, who);
        }
    }

    /** Whether {@code h} is a copy of {@code w}'s range as it is registered now whose build did not fail (it may still run). */
    private static boolean usable(Held h, WorkerView w) {
        return h != null && h.memberEpoch() == w.epoch() && !h.copy().failed();
    }

    private RangeCopy make(long pbn, WorkerView w, String who) {
        if (closed) {
            throw new BlocksUnavailableException("the master is stopping: no copy of a lost worker's range is made now", null);
        }
        if (bucket == null) {
            throw new BlocksUnavailableException("PBN " + pbn + " lives on " + who + ", which is not connected, and this master has"
                    + " no bucket to read the worker's archived range from: set holdfast.store.backend=s3 and the same"
                    + " holdfast.store.s3.* bucket and prefix as the workers on the master to restore from the bucket"
                    + " (docs/operations.md \"Restore while a worker is dead\"), or bring the worker back (GET /api/v1/cluster)", null);
        }
        RangeCopy c;
        try {
            c = RangeCopy.materialise(w.workerId(), w.range(), bucket.open().get(), bucket.cache(), dir.resolve("w" + w.workerId()),
                    space, sealedLogs.apply(w.workerId()));
        } catch (BlocksUnavailableException e) {
            throw new BlocksUnavailableException("PBN " + pbn + " lives on " + who + ", which is not connected; " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new BlocksUnavailableException("PBN " + pbn + " lives on " + who + ", which is not connected, and its range could"
                    + " not be copied from the bucket: " + e.getMessage() + "; the blocks are unavailable, not damaged: fix that"
                    + " and read again, or bring the worker back", e);
        }
        copies.put(w.workerId(), new Held(c, w.epoch()));
        if (closed) {
            drop(w.workerId()); // close ran while this copy was made
        }
        return c;
    }

    /** Drops the copy of the range holding {@code pbn}, if any: its worker is up again and serves it. */
    void workerUp(long pbn) {
        if (copies.isEmpty()) {
            return; // the common case
        }
        for (Held h : copies.values()) {
            if (h.copy().range().contains(pbn)) {
                drop(h.copy().worker());
            }
        }
    }

    /** The workers whose ranges are copied now (tests and diagnostics). */
    public List<Long> copied() {
        return List.copyOf(copies.keySet());
    }

    /** Closes worker {@code workerId}'s copy (after the reads in flight on it) and deletes its directory, if there is one. */
    private void drop(long workerId) {
        Held h = copies.remove(workerId);
        if (h != null) {
            h.copy().close();
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Long id : List.copyOf(copies.keySet())) {
            drop(id);
        }
    }
}
