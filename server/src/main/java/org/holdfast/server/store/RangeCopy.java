package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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
 * the bucket. Its location index lives in a scratch directory.
 *
 * <p>The build runs on a thread of its own and a block reads as soon as the log holding a good record
 * of it is indexed; a read of a PBN not indexed yet waits for the next log. A PBN seen only in records
 * that failed their check waits for the end of the build (a later log may hold its repair), and is then
 * damaged: its bytes are never returned. A PBN the copy does not index at the end is unavailable (the
 * worker may have stored it after the last upload this copy saw), never absent. A downloaded log stays
 * in the copy's directory for reads while the kept logs fit in the cache size and the disk above its
 * reserve; the others are read by range from the bucket, checked as any archived store's reads are.
 *
 * <p>With the master's {@link SealedLogs records} of the worker's logs, the copy reads only the recorded
 * logs and indexes a log only if its object has the recorded size and SHA-256: a log cut (even at a record
 * boundary), changed, planted or missing is reported ({@link #logProblems}) and its blocks are unavailable.
 */
public final class RangeCopy implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RangeCopy.class.getName());
    private static final byte[] NO_FINGERPRINT = new byte[Fingerprint.BYTES];

    private final long worker;
    private final long epoch;
    private final PbnRange range;
    private final Path dir;
    private final MetadataDb db;
    private final ObjectStore objects;
    private final LogCache.Settings cache;
    private final SpaceReserve space;
    private final Map<Long, String> damaged = new ConcurrentHashMap<>();
    private final String holder;
    private final RangeCopyProgress progress;
    private final SealedLogs sealed;
    // what the records found wrong with the bucket's logs (missing, unrecorded, not matching)
    private final List<String> logProblems = new CopyOnWriteArrayList<>();
    // set by the build once the store is made, before any read can start
    private volatile LogArchive archive;
    private volatile DataStore store;
    // reads hold it shared (never while waiting for the build); close takes it alone, after the reads in flight
    private final ReentrantReadWriteLock use = new ReentrantReadWriteLock();
    // guarded by this: the build thread runs; the resources released; close was interrupted waiting for the build, which releases them
    private boolean building;
    private boolean closerGaveUp;
    private volatile boolean closed;
    // closed because the build failed (not dropped): reads report the failure
    private volatile boolean broken;
    private volatile RuntimeException buildFailure;
    private boolean released;
    // build thread only: the largest log so far, the bytes of the logs kept on disk
    private long largestLog;
    private long keptBytes;
    private long lastBytes;

    private RangeCopy(long worker, long epoch, PbnRange range, Path dir, MetadataDb db, ObjectStore objects, LogCache.Settings cache,
                      SpaceReserve space, SealedLogs sealed) {
        this.sealed = sealed;
        this.worker = worker;
        this.epoch = epoch;
        this.range = range;
        this.dir = dir;
        this.db = db;
        this.objects = objects;
        this.cache = cache;
        this.space = space;
        this.holder = "the bucket copy of worker " + worker + "'s range (" + WorkerKeys.space(worker, epoch) + "/, PBNs " + range + ")";
        this.progress = new RangeCopyProgress(worker);
    }

    /**
     * Starts the copy of worker {@code worker}'s range {@code range} in {@code dir} (emptied first) from
     * {@code objects}, which the copy owns from now on (closed with it, or here if this fails), and returns
     * once it can be read (its logs are indexed in the background; reads wait for what they need).
     * {@code space} is the master's data disk reserve: the copy stops (and fails its reads) before it would
     * go below it, so a lost worker's range never fills the disk the master's catalog lives on.
     *
     * @throws BlocksUnavailableException if the bucket holds no log of the worker, or the master's disk is at its reserve
     * @throws RuntimeException           what the bucket or the build failed with (nothing is left in {@code dir})
     */
    public static RangeCopy materialise(long worker, PbnRange range, ObjectStore objects, LogCache.Settings cache, Path dir,
                                        SpaceReserve space) {
        return materialise(worker, range, objects, cache, dir, space, SealedLogs.NONE);
    }

    /** As {@link #materialise(long, PbnRange, ObjectStore, LogCache.Settings, Path, SpaceReserve)}, checking the bucket against {@code sealed}. */
    public static RangeCopy materialise(long worker, PbnRange range, ObjectStore objects, LogCache.Settings cache, Path dir,
                                        SpaceReserve space, SealedLogs sealed) {
        MetadataDb db = null;
        RangeCopy copy = null;
        try {
            delete(dir);
            Files.createDirectories(dir);
            roomFor(space, worker, 0);
            List<String> listing = objects.list(WorkerKeys.prefix(worker));
            RangeTakeover.Plan next = RangeTakeover.plan(worker, listing, key -> RangeTakeover.readMarker(objects, key));
            long epoch = next.epoch() - 1;
            if (epoch < 1) {
                throw new BlocksUnavailableException("the bucket holds no object of worker " + worker + " (" + WorkerKeys.prefix(worker)
                        + "): its range was never archived (a worker without holdfast.store.backend=s3), or this master's"
                        + " holdfast.store.s3.bucket and prefix name another bucket than the worker's", null);
            }
            List<String> problems = new ArrayList<>();
            RangeTakeover.Plan plan = new RangeTakeover.Plan(worker, epoch, sealed.toRead(worker, next.adopted(), listing, problems::add));
            LOG.log(System.Logger.Level.WARNING, "worker {0} is lost: copying its range {1} read-only from the bucket ({2} sealed"
                    + " logs of {3}/ and earlier epochs) into {4}, so that restores and verify can read its blocks; each block"
                    + " reads once its log is indexed", Long.toString(worker), range, plan.adopted().size(), WorkerKeys.space(worker, epoch), dir);
            db = MetadataDb.open(dir.resolve("catalog"), List.of(), false);
            if (sealed.recorded() && !sealed.complete()) {
                LOG.log(System.Logger.Level.WARNING, "worker {0} holds logs it uploaded before it kept their digests: the copy reads"
                        + " those unchecked (record by record only), and checks the others against the master''s records",
                        Long.toString(worker));
            }
            copy = new RangeCopy(worker, epoch, range, dir, db, objects, cache, space, sealed);
            copy.progress.planned(plan.adopted().size());
            for (String p : problems) {
                copy.logProblem(p);
            }
            copy.start(plan);
            copy.progress.awaitOpened();
            return copy;
        } catch (IOException | RuntimeException e) {
            if (copy != null) {
                copy.close(); // releases all once its build thread has ended
            } else {
                objects.close();
                if (db != null) {
                    db.close();
                }
                try {
                    delete(dir);
                } catch (RuntimeException ignored) {
                    // the next copy empties it first
                }
            }
            throw e instanceof IOException io ? StoreException.translate("range-copy", dir.toString(), null, io) : (RuntimeException) e;
        }
    }

    private void start(RangeTakeover.Plan plan) {
        synchronized (this) {
            building = true;
        }
        Thread t = new Thread(() -> build(plan), "range-copy-w" + worker);
        t.setDaemon(true);
        t.start();
    }

    /** Records and logs (error) what the master's records found wrong with a log of the bucket. */
    private void logProblem(String problem) {
        logProblems.add(problem);
        LOG.log(System.Logger.Level.ERROR, "bucket copy of worker " + worker + "'s range: " + problem + ". Put the log object the"
                + " worker sealed back in the bucket (docs/operations.md \"A worker's log does not match the master's record\")");
    }

    /** The build thread: indexes every log, settles the damaged blocks, and releases the copy if it was closed meanwhile. */
    private void build(RangeTakeover.Plan plan) {
        RuntimeException failed = null;
        try {
            RangeTakeover.Report built = RangeTakeover.build(plan, dir.resolve("data"), db, range, objects, dir.resolve("scratch"),
                    damaged::put, this::indexed, new RangeTakeover.Readable() {
                        @Override
                        public void opened() {
                            archive = LogArchive.forKeySpace(objects, WorkerKeys.space(worker, epoch), cache);
                            store = DataStore.openReadOnly(dir.resolve("data"), db, archive);
                            progress.opened();
                        }

                        @Override
                        public boolean keep(long bytes) {
                            return keepLog(bytes);
                        }

                        @Override
                        public boolean refuse(String key, Path file) {
                            String why = sealed.mismatch(key, file);
                            if (why != null) {
                                logProblem("worker " + worker + "'s " + why + ": not read, the blocks stored in it are unavailable");
                            }
                            return why != null;
                        }
                    });
            LOG.log(System.Logger.Level.WARNING, "worker {0}''s range is copied from the bucket: {1} blocks in {2} logs{3}",
                    Long.toString(worker), built.blocks(), built.logs(), damaged.isEmpty() ? "" : "; " + damaged.size()
                            + " blocks failed their check and are reported damaged");
        } catch (Throwable e) { // an Error too: a copy must never pass for complete when it is not
            failed = closed ? new BlocksUnavailableException(holder + " was dropped (its worker registered again)", e)
                    : e instanceof RuntimeException r ? r : new BlocksUnavailableException(e.toString(), e);
            buildFailure = failed;
            if (!closed) {
                LOG.log(System.Logger.Level.ERROR, "the copy of worker " + worker + "'s range from the bucket failed and is deleted;"
                        + " reads of its blocks fail until a read starts a new copy: " + e.getMessage(), e);
            }
        } finally {
            boolean orphaned;
            boolean closing;
            synchronized (this) {
                building = false;
                notifyAll(); // the closer waiting for this build
                orphaned = closerGaveUp;
                closing = closed;
            }
            try {
                if (orphaned) {
                    release();
                } else if (failed != null && !closing) {
                    broken = true;
                    close(); // gives the disk back at once (a build stopped at the reserve); reads say why it failed
                }
            } finally {
                progress.finished(failed); // after the release: whoever waits for the end finds the copy gone
            }
        }
    }

    /** After each log indexed: wakes the reads waiting for it, logs progress, and stops the build if closed or at the disk's reserve. */
    private void indexed(int done, int total, long bytes, long nanos) {
        progress.indexed(done, total, bytes, nanos);
        if (closed) {
            throw new BlocksUnavailableException(holder + " was closed while it was built", null);
        }
        largestLog = Math.max(largestLog, bytes - lastBytes);
        lastBytes = bytes;
        roomFor(space, worker, largestLog); // the next log may be as large, and its index entries come on top
    }

    /** Whether a downloaded log of {@code bytes} is kept for reads: within the cache size, with room for the next log above the reserve. */
    private boolean keepLog(long bytes) {
        if (keptBytes + bytes > cache.limitBytes()) {
            return false;
        }
        try {
            space.require(2 * Math.max(largestLog, bytes));
        } catch (StorageFullException e) {
            return false;
        }
        keptBytes += bytes;
        return true;
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

    /** Blocks whose records failed their check while the copy was made (reported damaged when read; 0 until it is built). */
    public int damagedBlocks() {
        return damaged.size();
    }

    /** What the master's records found wrong with the bucket's logs (missing, unrecorded, not matching); empty without records. */
    public List<String> logProblems() {
        return List.copyOf(logProblems);
    }

    /** Whether every log is indexed (false while building, or if the build failed). */
    public boolean built() {
        return progress.built();
    }

    /** Whether the build failed (reads fail; drop the copy and make a new one). */
    public boolean failed() {
        return buildFailure != null;
    }

    /**
     * How far the build of a copy of worker {@code worker}'s range is: {@code logsDone} of
     * {@code logsTotal} logs indexed, {@code bytesDone} downloaded, about {@code secondsLeft} to go
     * (by logs; -1 before the first log is indexed).
     */
    public record Progress(long worker, int logsDone, int logsTotal, long bytesDone, long secondsLeft) {
    }

    /** How far the build is now. */
    public Progress progress() {
        return progress.figures();
    }

    /**
     * Whether a read of {@code pbn} answers now without waiting for the build: its block is indexed,
     * or the read fails at once (the copy closed or failed, the block damaged, or not held once built).
     * False only while the build may still index it.
     */
    public boolean readableNow(long pbn) {
        use.readLock().lock();
        try {
            if (closed || buildFailure != null || progress.built() || damaged.containsKey(pbn) || !range.contains(pbn)) {
                return true;
            }
            boolean[] found = new boolean[1];
            held(new long[] {pbn}, 1, new byte[Fingerprint.BYTES], found);
            return found[0];
        } finally {
            use.readLock().unlock();
        }
    }

    /** Waits until the build has ended, built or failed (tests and diagnostics). */
    public void awaitBuilt() {
        long seen = progress.generation();
        while (!progress.built() && progress.failure() == null) {
            progress.awaitChange(seen);
            seen = progress.generation();
        }
    }

    /**
     * Reads the run of {@code pbns[from..from+n)} in this range that the copy holds, at least one block,
     * as {@link DataStore#readBatch} does (every record checked); waits while the build may still index
     * {@code pbns[from]}.
     *
     * @throws DamagedBlockException      if {@code pbns[from]} failed its check (when the copy was made, or now)
     * @throws BlocksUnavailableException if the copy does not hold {@code pbns[from]}, its build failed, or the bucket cannot be read now
     */
    public int readBatch(long[] pbns, int from, int n, BlockBatch into) {
        while (true) {
            long seen = progress.generation(); // before looking: a log indexed meanwhile moves it, and this looks again
            use.readLock().lock();
            try {
                if (closed) {
                    throw broken ? failure(buildFailure)
                            : new BlocksUnavailableException(holder + " was dropped just now (its worker registered again): read again", null);
                }
                int got = readOpen(pbns, from, n, into);
                if (got > 0) {
                    return got;
                }
            } finally {
                use.readLock().unlock();
            }
            progress.awaitChange(seen);
        }
    }

    /** As {@link #readBatch}; 0 if {@code pbns[from]} is not indexed (yet) and the build goes on. */
    private int readOpen(long[] pbns, int from, int n, BlockBatch into) {
        into.clear();
        // read before the index: once true, the index and the damaged blocks are complete
        boolean complete = progress.built();
        RuntimeException failure = buildFailure;
        if (failure != null) {
            throw failure(failure);
        }
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
            if (complete) {
                throw notHeld(pbns[from]);
            }
            return 0;
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

    private BlocksUnavailableException failure(RuntimeException cause) {
        return new BlocksUnavailableException(holder + " could not be made: " + cause.getMessage() + "; the blocks are unavailable,"
                + " not damaged: the next read starts a new copy", cause);
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
        String logs = logProblems.isEmpty() ? "" : "; " + logProblems.size() + " of the worker's logs in the bucket do not match the"
                + " master's records, so it may be in one of them: " + String.join("; ", logProblems);
        return new BlocksUnavailableException("PBN " + pbn + " is not in " + holder + ": the worker may have stored it after the"
                + " last upload the copy saw; it is unavailable, not absent, until the worker (or a replacement) registers again"
                + logs, null);
    }

    /**
     * Closes the copy and deletes its directory, after the reads in flight (reads waiting for the build
     * fail at once) and the build (which stops after the log it is downloading): nothing is written
     * there once this returns. Idempotent.
     */
    @Override
    public void close() {
        use.writeLock().lock();
        try {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
        } finally {
            use.writeLock().unlock();
        }
        progress.wake();
        synchronized (this) {
            while (building) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    closerGaveUp = true; // the build deletes it when it stops
                    return;
                }
            }
        }
        release();
    }

    private void release() {
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
        }
        if (store != null) {
            store.close();
        }
        if (archive != null) {
            archive.close(); // closes the object store
        } else {
            objects.close();
        }
        db.close();
        delete(dir);
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
