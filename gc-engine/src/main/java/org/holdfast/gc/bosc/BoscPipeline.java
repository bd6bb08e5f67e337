package org.holdfast.gc.bosc;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.GcStoreException;
import org.holdfast.gc.gma.GcMetadataArray;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaLayout;

/**
 * The GMA behind BOSC: owns the {@link GcMetadataArray}, the {@link UpdateLog}, the
 * {@link ChunkQueues} and the {@link Committer} threads of one GC directory.
 *
 * <h2>Write path</h2>
 * {@link #appendGroup} / {@link #appendSingle} put records into the log buffer; the flusher writes
 * and forces them (group commit) and queues them per chunk; committers apply them chunk by chunk in
 * disk order, write the chunks (A/B frames), force the GMA file and then write the checkpoint (the
 * oldest LSN still queued or in flight). Old log segments below the checkpoint are deleted.
 *
 * <h2>Recovery ({@link #open})</h2>
 * Read the checkpoint; scan the log from its LSN; cut a torn tail and any group without its END;
 * apply every remaining record whose LSN is above its chunk's applied LSN (so a record that reached
 * its chunk before the crash is not applied twice); force; write a checkpoint after the log's end.
 * {@link #lastOpId()} then tells the caller which operations are durably in the log; it must
 * re-drive the later ones (see {@code GcBookkeeper}).
 */
public final class BoscPipeline implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(BoscPipeline.class.getName());

    private final Path dir;
    private final BoscSettings settings;
    private final GcMetadataArray gma;
    private final ChunkQueues queues;
    private final UpdateLog log;
    private final List<Committer> committers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final Object checkpointLock = new Object();
    private final FileChannel lockChannel;
    private final FileLock dirLock;
    private long checkpointLsn;
    private long checkpointOpId;
    /** Committers advance the checkpoint at most this often (commitAll and close always do). */
    static final long CHECKPOINT_INTERVAL_NANOS = 1_000_000_000L;
    /** Chunks a replay writes between GMA syncs (their journal records: 8 MiB). */
    static final int REPLAY_SYNC_CHUNKS = 64;
    private long lastCheckpointNanos = System.nanoTime() - CHECKPOINT_INTERVAL_NANOS;
    private final AtomicLong updatesLogged = new AtomicLong();
    private final AtomicLong updatesApplied = new AtomicLong();
    private final AtomicLong updatesSkipped = new AtomicLong();
    private final long replayedRecords;
    private final long openedFromLsn;
    private final GmaLayout layout;
    private final long openedNextLsn;
    private long[] replayedChunks = new long[0];
    private final boolean openedEmpty;
    private volatile RuntimeException failure;
    private volatile RuntimeException committerStall;
    private volatile boolean closed;
    /** Tests observe the chunk order of each commit pass through this. */
    volatile java.util.function.Consumer<long[]> commitObserver;

    private BoscPipeline(Path dir, BoscSettings settings, PbnRange range) {
        this.dir = dir;
        this.settings = settings;
        try {
            Files.createDirectories(dir);
            lockChannel = FileChannel.open(dir.resolve("LOCK"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            dirLock = lockChannel.tryLock();
        } catch (IOException | OverlappingFileLockException e) {
            throw new GcStoreException("gc", dir, null, "cannot lock GC directory: " + e.getMessage(), e);
        }
        if (dirLock == null) {
            throw new GcStoreException("gc", dir, null, "GC directory is in use by another process");
        }
        this.openedEmpty = !java.nio.file.Files.exists(dir.resolve("checkpoint"));
        try {
            this.gma = GcMetadataArray.open(dir, settings.cacheChunks(), range);
        } catch (RuntimeException e) {
            try {
                lockChannel.close(); // releases the directory lock: a refused open leaves nothing held
            } catch (IOException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        this.layout = gma.layout();
        Checkpoint cp = Checkpoint.read(dir);
        Path logDir = dir.resolve("log");
        UpdateLog.Recovery rec = UpdateLog.recover(logDir, cp.lsn(), cp.opId());
        this.queues = new ChunkQueues(settings.maxQueuedUpdates(), rec.nextLsn() - 1, layout);
        this.openedFromLsn = cp.lsn();
        this.openedNextLsn = rec.nextLsn();
        this.replayedRecords = replay(rec);
        this.checkpointLsn = rec.nextLsn();
        this.checkpointOpId = rec.lastOpId();
        new Checkpoint(checkpointLsn, checkpointOpId).write(dir);
        this.log = new UpdateLog(logDir, settings, queues, rec.nextLsn(), rec.lastOpId());
        log.deleteBelow(checkpointLsn);
        for (int i = 0; i < settings.committerThreads(); i++) {
            Committer c = new Committer(this, i);
            Thread t = new Thread(c, "gma-committer-" + i);
            t.setDaemon(true);
            committers.add(c);
            threads.add(t);
            t.start();
        }
    }

    /** Opens the GC directory, replaying the log after a crash. */
    public static BoscPipeline open(Path dir, BoscSettings settings) {
        return new BoscPipeline(dir, settings, PbnRange.STANDALONE);
    }

    /**
     * As {@link #open(Path, BoscSettings)} for the PBNs of {@code range} (a worker's): the GMA counts
     * its chunks from the range and every update of a PBN outside it is refused before it is logged.
     */
    public static BoscPipeline open(Path dir, BoscSettings settings, PbnRange range) {
        return new BoscPipeline(dir, settings, range);
    }

    /** Which chunk and slot hold a PBN in this pipeline's GMA. */
    public GmaLayout layout() {
        return layout;
    }

    private long replay(UpdateLog.Recovery rec) {
        UpdateBatch b = rec.records();
        if (b.size() == 0) {
            return 0;
        }
        // Records are not contiguous in LSN (markers removed), so queue them one by one with
        // their own LSNs through a contiguous re-numbering is not allowed: apply directly instead,
        // chunk by chunk in disk order.
        java.util.TreeMap<Long, List<Integer>> byChunk = new java.util.TreeMap<>();
        for (int i = 0; i < b.size(); i++) {
            byChunk.computeIfAbsent(layout.chunkOf(b.pbn(i)), k -> new ArrayList<>()).add(i);
        }
        replayedChunks = byChunk.keySet().stream().mapToLong(Long::longValue).toArray();
        int unsynced = 0;
        for (var e : byChunk.entrySet()) {
            ReentrantLock l = gma.lock(e.getKey());
            l.lock();
            try {
                GmaChunk c = gma.load(e.getKey());
                for (int i : e.getValue()) {
                    if (c.apply(rec.lsns().get(i), b.kind(i), b.pbn(i), b.value(i))) {
                        updatesApplied.incrementAndGet();
                    } else {
                        updatesSkipped.incrementAndGet();
                    }
                }
                if (c.dirty()) {
                    gma.write(c);
                    unsynced++;
                }
            } finally {
                l.unlock();
            }
            if (unsynced == REPLAY_SYNC_CHUNKS) {
                // each write takes a journal record until the sync: a long log must not need a journal
                // of every chunk it touches (after a full disk stalled the committers, space is short)
                gma.sync();
                unsynced = 0;
            }
        }
        gma.sync();
        return b.size();
    }

    public BoscSettings settings() {
        return settings;
    }

    ChunkQueues queues() {
        return queues;
    }

    /** The array itself, for sweeps and checks (always under the chunk locks). */
    public GcMetadataArray gma() {
        return gma;
    }

    /** Logs one operation's updates as an atomic group. Blocks while the queues are full. */
    public long appendGroup(long opId, UpdateBatch updates) {
        checkHealthy();
        for (int i = 0; i < updates.size(); i++) {
            int kind = updates.kind(i);
            if (kind != UpdateBatch.GROUP_BEGIN && kind != UpdateBatch.GROUP_END) {
                layout.requireHolds(updates.pbn(i), "a GC metadata update (operation " + opId + ")");
            }
        }
        try {
            long lsn = log.appendGroup(opId, updates);
            updatesLogged.addAndGet(updates.updateCount());
            return lsn;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the GMA queues were full", e);
        }
    }

    /** Logs one stand-alone update (a grace protection). */
    public long appendSingle(int kind, long pbn, long value) {
        checkHealthy();
        layout.requireHolds(pbn, "a GC metadata update");
        try {
            long lsn = log.appendSingle(kind, pbn, value);
            updatesLogged.incrementAndGet();
            return lsn;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the GMA queues were full", e);
        }
    }

    /**
     * Logs one stand-alone update of {@code kind} and {@code value} for every non-zero PBN of
     * {@code pbns[off..off+count)} in one append (a batch of grace protections). Returns the LSN
     * of the last record, or -1 if there was none.
     */
    public long appendSingles(int kind, long[] pbns, int off, int count, long value) {
        checkHealthy();
        for (int i = off; i < off + count; i++) {
            if (pbns[i] != 0) {
                layout.requireHolds(pbns[i], "a GC metadata update");
            }
        }
        try {
            long[] n = new long[1];
            long lsn = log.appendSingles(kind, pbns, off, count, value, n);
            updatesLogged.addAndGet(n[0]);
            return lsn;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the GMA queues were full", e);
        }
    }

    /** Highest operation id in the log (after a restart: the highest durably logged one). */
    public long lastOpId() {
        return log.lastOpId();
    }

    /** Barrier: every record appended before this call is written to the log and queued. */
    public void awaitEnqueued() {
        try {
            log.awaitEnqueued();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Barrier plus force: every record appended before this call is durable in the log. */
    public void awaitDurable() {
        awaitEnqueued();
        log.syncTo(log.lastAppendedLsn());
    }

    /**
     * Commits the given chunks (ascending order expected): apply queue, write, then one fsync and a
     * checkpoint advance. With {@code tryOnly}, a chunk locked by someone else is skipped.
     * Returns the number of chunks written.
     */
    int commitChunks(long[] chunks, boolean tryOnly) {
        java.util.function.Consumer<long[]> observer = commitObserver;
        if (observer != null) {
            observer.accept(chunks.clone());
        }
        List<ChunkQueues.Queue> done = new ArrayList<>(chunks.length);
        List<Long> doneChunks = new ArrayList<>(chunks.length);
        try {
            for (long c : chunks) {
                ReentrantLock l = gma.lock(c);
                if (tryOnly) {
                    if (!l.tryLock()) {
                        continue;
                    }
                } else {
                    l.lock();
                }
                try {
                    ChunkQueues.Queue q = commitLocked(c);
                    if (q != null) {
                        done.add(q);
                        doneChunks.add(c);
                    }
                } finally {
                    l.unlock();
                }
            }
        } finally {
            if (!done.isEmpty()) {
                syncOrRequeue(doneChunks, done);
                advanceCheckpoint(false);
            }
        }
        return done.size();
    }

    /**
     * Forces the GMA and releases the written queues; if the force fails, they go back into their
     * queues (written again by a later pass), so a failed fsync loses nothing and stops no thread.
     */
    private void syncOrRequeue(List<Long> chunks, List<ChunkQueues.Queue> written) {
        try {
            gma.sync();
        } catch (RuntimeException e) {
            for (int i = 0; i < written.size(); i++) {
                queues.requeue(chunks.get(i), written.get(i));
            }
            throw e;
        }
        // the GMA writes again: a stalled committer may find its queues already committed by this
        // pass (a sweep, commitAll) and never run a pass of its own that would clear its stall
        committerStall = null;
        for (ChunkQueues.Queue q : written) {
            queues.finished(q);
        }
    }

    /**
     * Applies chunk {@code c}'s queue and writes it; caller holds the chunk lock and later syncs. If
     * the write fails (a full disk, an I/O error) the queue goes back (the cached chunk keeps the
     * updates and stays dirty), and the failure is thrown: the next pass writes it again.
     */
    private ChunkQueues.Queue commitLocked(long c) {
        ChunkQueues.Queue q = queues.drain(c);
        if (q == null) {
            return null;
        }
        try {
            // WAL rule: the log records must be durable before a chunk that holds them is written
            log.syncTo(q.lsn[q.size - 1]);
            GmaChunk chunk = gma.load(c);
            long applied = 0;
            for (int i = 0; i < q.size; i++) {
                if (chunk.apply(q.lsn[i], q.kind[i], q.pbn[i], q.value[i])) {
                    applied++;
                }
            }
            updatesApplied.addAndGet(applied);
            updatesSkipped.addAndGet(q.size - applied);
            gma.write(chunk);
        } catch (RuntimeException e) {
            queues.requeue(c, q);
            throw e;
        }
        return q;
    }

    /**
     * Brings chunk {@code c} up to date with everything queued for it and runs {@code action} on
     * it while holding its lock (the sweep's re-check). Writes the chunk if the action changed it;
     * the caller forces the GMA with {@link #syncGma()}.
     */
    public void withCurrentChunk(long c, java.util.function.Consumer<GmaChunk> action) {
        ReentrantLock l = gma.lock(c);
        l.lock();
        ChunkQueues.Queue q = null;
        try {
            q = commitLocked(c);
            GmaChunk chunk = gma.load(c);
            action.accept(chunk);
            if (chunk.dirty()) {
                gma.write(chunk);
            }
        } finally {
            l.unlock();
            if (q != null) {
                syncOrRequeue(List.of(c), List.of(q));
                advanceCheckpoint(false);
            }
        }
    }

    /**
     * True if an update was queued for chunk {@code c} since the last call for it (clears the mark).
     * The sweep takes it before reading the chunk, so an update queued later marks it again.
     */
    public boolean takeTouched(long c) {
        return queues.takeTouched(c);
    }

    /** One past the highest chunk that is written or has queued updates (call after a barrier). */
    public long chunkLimit() {
        return Math.max(gma.chunkCount(), queues.chunkLimit());
    }

    public void syncGma() {
        gma.sync();
    }

    /** Applies every queued update now (after a barrier): for checks and orderly shutdown. */
    public void commitAll() {
        awaitEnqueued();
        while (true) {
            long[] chunks = queues.pendingFrom(0, Integer.MAX_VALUE);
            if (chunks.length == 0) {
                break;
            }
            commitChunks(chunks, false);
        }
        advanceCheckpoint(true);
    }

    /**
     * Moves the replay start forward. Unless {@code now}, at most once per
     * {@link #CHECKPOINT_INTERVAL_NANOS}: each write costs two fsyncs and a rename, and an older
     * checkpoint only means a longer (idempotent) replay after a crash.
     */
    private void advanceCheckpoint(boolean now) {
        synchronized (checkpointLock) {
            if (!now && System.nanoTime() - lastCheckpointNanos < CHECKPOINT_INTERVAL_NANOS) {
                return;
            }
            long[] op = {checkpointOpId};
            long candidate = queues.oldestUncommitted(op);
            if (candidate > checkpointLsn && settings.advanceCheckpoint() && !closed) {
                try {
                    new Checkpoint(candidate, op[0]).write(dir);
                } catch (GcStoreException e) {
                    if (now) {
                        throw e;
                    }
                    // an older checkpoint only means a longer replay: the next pass tries again
                    LOG.log(System.Logger.Level.WARNING, "cannot advance the GC checkpoint (" + e.getMessage() + "); retrying later");
                    lastCheckpointNanos = System.nanoTime();
                    return;
                }
                checkpointLsn = candidate;
                checkpointOpId = op[0];
                lastCheckpointNanos = System.nanoTime();
                log.deleteBelow(candidate);
                log.requestTrim(candidate);
            }
        }
    }

    /** A committer found nothing to do: the checkpoint catches up with what is committed (rate-limited). */
    void idleCheckpoint() {
        advanceCheckpoint(false);
    }

    void committerFailed(int id, RuntimeException e) {
        failure = e;
    }

    /** A committer's pass failed on I/O and it retries ({@code e}), or it works again ({@code null}). */
    void committerStalled(RuntimeException e) {
        committerStall = e;
    }

    /**
     * Why GMA updates wait right now, or null: the log cannot be written, or a committer cannot write
     * or force the GMA (a full disk); both retry by themselves and resume once the cause is gone.
     */
    public GcStoreException stalled() {
        GcStoreException s = log.stalled();
        if (s != null) {
            return s;
        }
        RuntimeException c = committerStall;
        return c == null ? null : c instanceof GcStoreException g ? g
                : new GcStoreException("gma", gma.file(), null, "a GMA committer retries: " + c.getMessage(), c);
    }

    /** The failure that stopped the pipeline (no retry can help; a restart replays the log), or null. */
    public RuntimeException failure() {
        return failure;
    }

    private void checkHealthy() {
        if (failure != null) {
            throw new GcStoreException("gc", dir, null, "a GMA committer failed: " + failure.getMessage(), failure);
        }
        if (closed) {
            throw new IllegalStateException("GC pipeline is closed");
        }
    }

    /** GMA updates logged by this instance (the O(delta) measure). */
    public long updatesLogged() {
        return updatesLogged.get();
    }

    /** Updates applied to chunks (including replay). */
    public long updatesApplied() {
        return updatesApplied.get();
    }

    /** Updates skipped because their chunk already had them (replay after a crash). */
    public long updatesSkipped() {
        return updatesSkipped.get();
    }

    /** True if this directory had no checkpoint when opened (a new GC directory). */
    public boolean openedEmpty() {
        return openedEmpty;
    }

    /** The GC directory this pipeline owns. */
    public Path dir() {
        return dir;
    }

    /** LSN where log replay started at open (the checkpoint's). */
    public long openedFromLsn() {
        return openedFromLsn;
    }

    /** LSN the log continued with after open: every record before it was replayed or older than the checkpoint. */
    public long openedNextLsn() {
        return openedNextLsn;
    }

    /** Chunks that log replay at open may have changed, ascending (the sweep must look at them again). */
    public long[] replayedChunks() {
        return replayedChunks.clone();
    }

    /** Highest LSN handed to the chunk queues; after {@link #awaitEnqueued()}, every appended one. */
    public long enqueuedLsn() {
        return queues.enqueuedLsn();
    }

    /** Records found in the log at open. */
    public long replayedRecords() {
        return replayedRecords;
    }

    /** Group-commit batches the log wrote. */
    public long logBatches() {
        return log.batchesWritten();
    }

    public long queuedUpdates() {
        return queues.queuedUpdates();
    }

    public long checkpointLsn() {
        synchronized (checkpointLock) {
            return checkpointLsn;
        }
    }

    /** Orderly shutdown: flush the log, commit every queue, checkpoint, close files. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        RuntimeException err = null;
        try {
            if (failure == null) {
                commitAll();
            }
        } catch (RuntimeException e) {
            err = e;
        }
        stopCommitters(false);
        log.close();
        if (err == null && failure == null) {
            try {
                commitAll();
                log.trimClosed(checkpointLsn()); // every record is committed: none stays in the log at rest
            } catch (RuntimeException e) {
                err = e;
            }
        }
        closed = true;
        gma.close();
        releaseLock();
        if (err != null) {
            throw err;
        }
    }

    /**
     * Simulates a crash (tests): threads stop, buffered log records are lost, nothing is forced or
     * checkpointed. Files written so far stay as they are, as after a killed process.
     */
    public void abandon() {
        closed = true;
        stopCommitters(true);
        log.abandon();
        gma.close();
        releaseLock();
    }

    private void stopCommitters(boolean interrupt) {
        for (Committer c : committers) {
            c.stop();
        }
        for (Thread t : threads) {
            if (interrupt) {
                // an interrupt during file I/O closes the channel: only acceptable when crashing
                t.interrupt();
            }
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void releaseLock() {
        try {
            dirLock.release();
            lockChannel.close();
        } catch (IOException ignored) {
            // closing a lock file cannot lose data
        }
    }
}
