package org.holdfast.gc.bosc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.GcStoreException;

/**
 * The BOSC write-ahead log of GMA updates, with group commit.
 *
 * <p>Appenders put records into an in-memory buffer under a lock and return at once (blocking
 * only while the buffer is full). One flusher thread swaps the buffer out, writes it to the current
 * segment file, forces it per {@link FsyncPolicy}, and then hands the records, in LSN order, to
 * {@link ChunkQueues}. So many producers share one write and one fsync, and a record never reaches
 * a chunk queue before it is in the log.
 *
 * <pre>
 * segment file  log/seg-{first LSN, 20 digits}.log, a sequence of 29-byte records:
 *   [0..7] LSN  [8] kind  [9..16] PBN (or operation id)  [17..24] value  [25..28] CRC32C of 0..24
 * </pre>
 *
 * A group (one operation: a snapshot commit, a hold, ...) is GROUP_BEGIN, its updates, GROUP_END,
 * always written in one batch; replay applies a group only if its END is intact, so a crash never
 * applies half an operation. Single records (grace protection) stand alone.
 *
 * <p>Trimming: once the checkpoint has passed every record written, the records are dead weight.
 * The flusher then starts an empty segment named after the checkpoint and deletes the older ones
 * ({@link #requestTrim}), at most once per {@link #TRIM_MIN_BYTES} written; an orderly close always
 * does ({@link #trimClosed}). A crash between the two steps leaves old segments wholly below the
 * checkpoint, which replay skips and the next open deletes.
 */
public final class UpdateLog implements AutoCloseable {
    static final int RECORD_BYTES = 29;
    private static final String STORE = "gma-log";
    private static final System.Logger LOG = System.getLogger(UpdateLog.class.getName());
    /** A group larger than this in a log being replayed is corruption, not data. */
    static final long MAX_GROUP_RECORDS = 1L << 31;

    private final Path dir;
    private final BoscSettings settings;
    private final ChunkQueues sink;
    private final Object appendLock = new Object();
    private final Object forceLock = new Object();
    private UpdateBatch pending = new UpdateBatch(1024);
    private UpdateBatch spare = new UpdateBatch(1024);
    private long nextLsn;
    private long lastOpId;
    private final ByteBuffer encodeBuf = ByteBuffer.allocateDirect(RECORD_BYTES * 4096);
    private final CRC32C crc = new CRC32C();
    private final byte[] record = new byte[RECORD_BYTES];
    private final ByteBuffer recordBuf = ByteBuffer.wrap(record);
    private FileChannel segment;
    private Path segmentPath;
    private long segmentBytes;
    private volatile long writtenLsn;
    private volatile long durableLsn;
    private volatile long lastForceNanos = System.nanoTime();
    private volatile boolean running = true;
    private volatile RuntimeException failure;
    /** Set while writing the log fails (a full disk): the flusher retries; appenders and barriers fail fast. */
    private volatile GcStoreException stalled;
    private final Thread flusher;
    /** Longest wait for more appends before a batch is written and forced. */
    static final long GROUP_WINDOW_NANOS = 10_000_000L;
    /** Highest LSN a barrier waits for (guarded by appendLock): the group window ends while it is pending. */
    private long barrierLsn;
    private volatile long batchesWritten;
    /** A running log trims a segment only once it holds this much (a checkpoint comes every second). */
    static final long TRIM_MIN_BYTES = 64L << 10;
    /** The newest checkpoint the pipeline reported (0: none yet): the flusher trims when it equals the next LSN. */
    private volatile long trimLsn;

    UpdateLog(Path dir, BoscSettings settings, ChunkQueues sink, long nextLsn, long lastOpId) {
        this.dir = dir;
        this.settings = settings;
        this.sink = sink;
        this.nextLsn = nextLsn;
        this.lastOpId = lastOpId;
        this.writtenLsn = nextLsn - 1;
        this.durableLsn = nextLsn - 1;
        openSegment(nextLsn);
        this.flusher = new Thread(this::flushLoop, "gma-log-flusher");
        flusher.setDaemon(true);
        flusher.start();
    }

    static Path segmentName(Path dir, long firstLsn) {
        return dir.resolve(String.format("seg-%020d.log", firstLsn));
    }

    private void openSegment(long firstLsn) {
        Path p = segmentName(dir, firstLsn);
        try {
            Files.createDirectories(dir);
            segment = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
            segmentPath = p;
            segmentBytes = 0;
        } catch (IOException e) {
            throw new GcStoreException(STORE, p, null, "cannot create segment: " + e.getMessage(), e);
        }
    }

    /**
     * Appends one operation as a group. Blocks while the buffer is full. Returns the LSN of its END
     * record.
     */
    public long appendGroup(long opId, UpdateBatch updates) throws InterruptedException {
        synchronized (appendLock) {
            awaitRoom(updates.size() + 2);
            pending.add(UpdateBatch.GROUP_BEGIN, opId, updates.size());
            pending.addAll(updates);
            pending.add(UpdateBatch.GROUP_END, opId, updates.size());
            nextLsn += updates.size() + 2;
            lastOpId = Math.max(lastOpId, opId);
            appendLock.notifyAll();
            return nextLsn - 1;
        }
    }

    /** Appends one stand-alone update; returns its LSN. */
    public long appendSingle(int kind, long pbn, long value) throws InterruptedException {
        synchronized (appendLock) {
            awaitRoom(1);
            pending.add(kind, pbn, value);
            nextLsn++;
            appendLock.notifyAll();
            return nextLsn - 1;
        }
    }

    /**
     * Appends one stand-alone record per non-zero PBN of {@code pbns[off..off+count)} under one
     * lock (a PBN equal to the one before it is written once). Stores the number appended in
     * {@code appended[0]}; returns the last LSN, or -1 if none.
     */
    public long appendSingles(int kind, long[] pbns, int off, int count, long value, long[] appended)
            throws InterruptedException {
        int n = 0;
        synchronized (appendLock) {
            awaitRoom(count);
            long prev = 0;
            for (int i = off; i < off + count; i++) {
                long p = pbns[i];
                if (p != 0 && p != prev) {
                    pending.add(kind, p, value);
                    n++;
                }
                prev = p;
            }
            nextLsn += n;
            if (n > 0) {
                appendLock.notifyAll();
            }
            appended[0] = n;
            return n > 0 ? nextLsn - 1 : -1;
        }
    }

    private void awaitRoom(int n) throws InterruptedException {
        while (pending.size() > 0 && pending.size() + n > settings.maxPendingRecords()) {
            checkFailure();
            GcStoreException s = stalled;
            if (s != null) {
                throw s; // the buffer will not drain before the disk has room: fail now, not hang
            }
            appendLock.wait(100);
        }
        checkFailure();
        if (!running) {
            throw new IllegalStateException("update log is closed");
        }
    }

    private void checkFailure() {
        if (failure != null) {
            throw failure;
        }
    }

    /** LSN of the newest record appended (buffered or written). */
    public long lastAppendedLsn() {
        synchronized (appendLock) {
            return nextLsn - 1;
        }
    }

    /** Highest operation id appended so far. */
    public long lastOpId() {
        synchronized (appendLock) {
            return lastOpId;
        }
    }

    /** Group-commit batches written (each one write call and, per policy, one fsync). */
    public long batchesWritten() {
        return batchesWritten;
    }

    public long durableLsn() {
        return durableLsn;
    }

    /** Why writing the log fails right now (the flusher keeps retrying), or null if it does not. */
    public GcStoreException stalled() {
        return stalled;
    }

    /** Waits until every record appended before this call is in the log and in the chunk queues. */
    public void awaitEnqueued() throws InterruptedException {
        long target;
        synchronized (appendLock) {
            target = nextLsn - 1;
            barrierLsn = Math.max(barrierLsn, target);
            appendLock.notifyAll();
        }
        while (sink.enqueuedLsn() < target) {
            checkFailure();
            GcStoreException s = stalled;
            if (s != null) {
                throw s;
            }
            if (!flusher.isAlive()) {
                throw new IllegalStateException("update log flusher is not running");
            }
            sink.awaitEnqueued(Math.min(target, sink.enqueuedLsn() + 1));
        }
    }

    /** Makes every written record up to {@code lsn} durable (the WAL rule before a chunk write). */
    public void syncTo(long lsn) {
        if (durableLsn >= lsn) {
            return;
        }
        synchronized (forceLock) {
            if (durableLsn >= lsn) {
                return;
            }
            long w = writtenLsn;
            force();
            durableLsn = Math.max(durableLsn, w);
        }
    }

    private void force() {
        try {
            segment.force(false);
            lastForceNanos = System.nanoTime();
        } catch (IOException e) {
            throw new GcStoreException(STORE, segmentPath, null, "fsync failed: " + e.getMessage(), e);
        }
    }

    private void flushLoop() {
        try {
            while (true) {
                UpdateBatch batch;
                synchronized (appendLock) {
                    while (pending.size() == 0 && running) {
                        appendLock.wait(Math.max(1, settings.fsyncInterval().toMillis()));
                        if (pending.size() == 0) {
                            intervalForce();
                            trimCommitted(TRIM_MIN_BYTES);
                        }
                    }
                    awaitGroup();
                    if (pending.size() == 0 && !running) {
                        return;
                    }
                    batch = pending;
                    batch.firstLsn(nextLsn - batch.size());
                    pending = spare;
                    spare = batch;
                    appendLock.notifyAll();
                }
                writeRetrying(batch);
                batchesWritten++;
                sink.enqueue(batch);
                batch.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    /**
     * Group-commit window (caller holds appendLock, records are pending): with a force per batch,
     * let appends gather for up to {@link #GROUP_WINDOW_NANOS} so that a stream of small appends
     * (grace protections, one per frame) costs tens of forces a second, not one per append. Nobody
     * waits on an append; a barrier ({@link #awaitEnqueued}) or a filling buffer ends it at once.
     */
    private void awaitGroup() throws InterruptedException {
        if (settings.fsyncPolicy() != FsyncPolicy.EVERY_BATCH) {
            return;
        }
        long deadline = System.nanoTime() + GROUP_WINDOW_NANOS;
        // pending records hold LSNs nextLsn - pending.size() .. nextLsn - 1
        while (running && barrierLsn < nextLsn - pending.size() && pending.size() < settings.maxPendingRecords() / 2) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            appendLock.wait(Math.max(1, left / 1_000_000));
        }
    }

    private void intervalForce() {
        if (settings.fsyncPolicy() == FsyncPolicy.INTERVAL && writtenLsn > durableLsn
                && System.nanoTime() - lastForceNanos >= settings.fsyncInterval().toNanos()) {
            syncTo(writtenLsn);
        }
    }

    /**
     * Writes one batch, retrying with back-off while that fails (a full disk) instead of letting
     * the flusher die: the records wait in memory, appenders and barriers fail fast meanwhile
     * ({@link #stalled()}), and GC goes on by itself once space is back.
     */
    private void writeRetrying(UpdateBatch b) throws InterruptedException {
        long backoffMillis = 20;
        while (true) {
            try {
                write(b);
                if (stalled != null) {
                    stalled = null;
                    LOG.log(System.Logger.Level.INFO, "GC log writes again after a failure (space is back)");
                }
                return;
            } catch (GcStoreException e) {
                if (!running) {
                    throw e;
                }
                if (stalled == null) {
                    LOG.log(System.Logger.Level.WARNING, "cannot write the GC log (" + e.getMessage() + "); retrying until it works"
                            + " (free space on the data disk)");
                }
                stalled = e;
                synchronized (appendLock) {
                    appendLock.notifyAll(); // waiting appenders see the stall
                }
                Thread.sleep(backoffMillis);
                backoffMillis = Math.min(backoffMillis * 2, 1000);
            }
        }
    }

    private void write(UpdateBatch b) {
        long last = b.lsn(b.size() - 1);
        if (writtenLsn < last) {
            writeRecords(b);
            writtenLsn = last;
        }
        if (settings.fsyncPolicy() == FsyncPolicy.EVERY_BATCH) {
            syncTo(writtenLsn);
        } else {
            intervalForce();
        }
    }

    /** Appends the batch's records; on failure cuts the segment back, so a retry writes them again at the same place. */
    private void writeRecords(UpdateBatch b) {
        synchronized (forceLock) {
            if (segmentBytes >= settings.segmentBytes()) {
                // batches hold whole groups, so a group never spans two segments
                force();
                durableLsn = Math.max(durableLsn, writtenLsn);
                FileChannel old = segment;
                Path oldPath = segmentPath;
                openSegment(b.firstLsn()); // on failure the old segment stays current and open
                try {
                    old.close();
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.WARNING, "closing GC log segment " + oldPath + " failed: " + e.getMessage());
                }
            }
        }
        long start = segmentBytes;
        try {
            for (int i = 0; i < b.size(); i++) {
                if (encodeBuf.remaining() < RECORD_BYTES) {
                    drain();
                }
                // encoded in a heap scratch first: no view object per record
                recordBuf.clear();
                recordBuf.putLong(b.lsn(i)).put((byte) b.kind(i)).putLong(b.pbn(i)).putLong(b.value(i));
                crc.reset();
                crc.update(record, 0, 25);
                recordBuf.putInt((int) crc.getValue());
                encodeBuf.put(record);
            }
            drain();
        } catch (IOException e) {
            encodeBuf.clear();
            try {
                segment.position(start); // a retry overwrites the torn part in place
                segmentBytes = start;
                segment.truncate(start);
            } catch (IOException t) {
                e.addSuppressed(t);
            }
            throw new GcStoreException(STORE, segmentPath, "lsn " + b.firstLsn(), "write failed: " + e.getMessage(), e);
        }
    }

    private void drain() throws IOException {
        encodeBuf.flip();
        while (encodeBuf.hasRemaining()) {
            segmentBytes += segment.write(encodeBuf);
        }
        encodeBuf.clear();
    }

    private void closeSegment() {
        try {
            segment.close();
        } catch (IOException e) {
            throw new GcStoreException(STORE, segmentPath, null, "close failed: " + e.getMessage(), e);
        }
    }

    /** The checkpoint moved to {@code checkpointLsn}: the flusher trims the log if that covers every record written. */
    void requestTrim(long checkpointLsn) {
        trimLsn = checkpointLsn;
        synchronized (appendLock) {
            appendLock.notifyAll();
        }
    }

    /**
     * After {@link #close()}: if {@code checkpointLsn} is past every record written, leaves the log
     * as one empty segment, so an orderly stop leaves no committed records behind.
     */
    void trimClosed(long checkpointLsn) {
        trimLsn = checkpointLsn;
        synchronized (appendLock) {
            trimCommitted(1);
        }
        synchronized (forceLock) {
            if (segment.isOpen()) {
                closeSegment();
            }
        }
    }

    /**
     * Starts an empty segment at the checkpoint and deletes the older ones, if the checkpoint is
     * past every record and the current segment holds at least {@code minBytes}. Only the flusher
     * (idle, holding appendLock) or a closed log calls this, so no write is under way.
     */
    private void trimCommitted(long minBytes) {
        long lsn = trimLsn;
        if (lsn != nextLsn || writtenLsn != nextLsn - 1 || segmentBytes < minBytes) {
            return;
        }
        synchronized (forceLock) {
            FileChannel old = segment;
            Path oldPath = segmentPath;
            try {
                openSegment(lsn);
            } catch (GcStoreException e) {
                // the old segment stays current and nothing is lost; a later checkpoint tries again
                LOG.log(System.Logger.Level.WARNING, "cannot trim the GC log: " + e.getMessage());
                return;
            }
            try {
                old.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "closing GC log segment " + oldPath + " failed: " + e.getMessage());
            }
            if (!running) {
                closeSegment();
            }
        }
        KillPoints.hit(KillPoints.GC_LOG_TRIM_AFTER_NEW_SEGMENT);
        try {
            deleteBelow(lsn);
        } catch (GcStoreException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot trim the GC log: " + e.getMessage()); // the next open deletes them
        }
    }

    /** Deletes segments wholly below {@code checkpointLsn} (never the current one). */
    void deleteBelow(long checkpointLsn) {
        List<long[]> segs = listSegments(dir);
        for (int i = 0; i + 1 < segs.size(); i++) {
            long nextFirst = segs.get(i + 1)[0];
            Path p = segmentName(dir, segs.get(i)[0]);
            if (nextFirst <= checkpointLsn && !p.equals(segmentPath)) {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new GcStoreException(STORE, p, null, "cannot delete old segment: " + e.getMessage(), e);
                }
            }
        }
    }

    /** Flushes everything appended, forces the log and stops the flusher. */
    @Override
    public void close() {
        synchronized (appendLock) {
            running = false;
            appendLock.notifyAll();
        }
        awaitFlusherAndCloseSegment(true);
    }

    /** Simulated crash: stops without flushing the buffer or forcing the file. */
    void abandon() {
        running = false;
        flusher.interrupt();
        awaitFlusherAndCloseSegment(false);
    }

    /**
     * The end of {@link #close} and {@link #abandon}, once the flusher was told to stop: waits for it
     * (an interrupt is kept), then closes the open segment, forcing it first if {@code force}.
     */
    private void awaitFlusherAndCloseSegment(boolean force) {
        try {
            flusher.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (forceLock) {
            if (segment.isOpen()) {
                if (force) {
                    force();
                }
                closeSegment();
            }
        }
    }

    // ---------------------------------------------------------------- recovery

    /** What a log scan found: the records to replay and where the log continues. */
    record Recovery(UpdateBatch records, LongList lsns, long nextLsn, long lastOpId, long truncatedBytes) {
    }

    static List<long[]> listSegments(Path dir) {
        List<long[]> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(p -> {
                String n = p.getFileName().toString();
                if (n.startsWith("seg-") && n.endsWith(".log") && n.length() == 28) {
                    out.add(new long[] {Long.parseLong(n.substring(4, 24))});
                }
            });
        } catch (IOException e) {
            throw new GcStoreException(STORE, dir, null, "cannot list segments: " + e.getMessage(), e);
        }
        out.sort((a, b) -> Long.compare(a[0], b[0]));
        return out;
    }

    /**
     * Reads the log from {@code fromLsn}: returns every record at or after it that belongs to a
     * complete group or stands alone, in LSN order. A torn or incomplete tail (crash during a
     * write) is cut off the file, so appends continue after the last complete group.
     */
    static Recovery recover(Path dir, long fromLsn, long checkpointOpId) {
        List<long[]> segs = listSegments(dir);
        UpdateBatch out = new UpdateBatch(1024);
        LongList lsns = new LongList();
        UpdateBatch group = new UpdateBatch(64);
        long expected = -1;
        long lastOpId = checkpointOpId;
        long truncated = 0;
        long next = fromLsn;
        ByteBuffer rec = ByteBuffer.allocate(RECORD_BYTES);
        CRC32C c = new CRC32C();
        boolean stop = false;
        for (int si = 0; si < segs.size() && !stop; si++) {
            long first = segs.get(si)[0];
            if (si + 1 < segs.size() && segs.get(si + 1)[0] <= fromLsn) {
                continue; // wholly below the checkpoint
            }
            Path p = segmentName(dir, first);
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                long size = ch.size();
                long pos = 0;
                long groupStartPos = -1;
                long groupOp = 0;
                long groupBeginLsn = -1;
                while (true) {
                    if (pos + RECORD_BYTES > size) {
                        break;
                    }
                    rec.clear();
                    while (rec.hasRemaining()) {
                        if (ch.read(rec, pos + rec.position()) < 0) {
                            break;
                        }
                    }
                    c.reset();
                    c.update(rec.array(), 0, 25);
                    long lsn = rec.getLong(0);
                    boolean ok = !rec.hasRemaining() && rec.getInt(25) == (int) c.getValue()
                            && (expected < 0 || lsn == expected);
                    if (!ok) {
                        break;
                    }
                    int kind = rec.get(8);
                    long pbn = rec.getLong(9);
                    long value = rec.getLong(17);
                    expected = lsn + 1;
                    if (kind == UpdateBatch.GROUP_BEGIN) {
                        if (value < 0 || value > MAX_GROUP_RECORDS) {
                            break;
                        }
                        group.clear();
                        group.firstLsn(lsn + 1);
                        groupStartPos = pos;
                        groupBeginLsn = lsn;
                        groupOp = pbn;
                    } else if (kind == UpdateBatch.GROUP_END) {
                        if (groupStartPos < 0 || pbn != groupOp || value != group.size()) {
                            break;
                        }
                        if (group.firstLsn() >= fromLsn || lsn >= fromLsn) {
                            for (int i = 0; i < group.size(); i++) {
                                if (group.lsn(i) >= fromLsn) {
                                    appendAt(out, lsns, group.lsn(i), group.kind(i), group.pbn(i), group.value(i));
                                }
                            }
                        }
                        lastOpId = Math.max(lastOpId, groupOp);
                        groupStartPos = -1;
                        group.clear();
                    } else if (groupStartPos >= 0) {
                        group.add(kind, pbn, value);
                    } else if (lsn >= fromLsn) {
                        appendAt(out, lsns, lsn, kind, pbn, value);
                    }
                    pos += RECORD_BYTES;
                    next = Math.max(next, lsn + 1);
                }
                long keep = groupStartPos >= 0 ? groupStartPos : pos;
                if (groupStartPos >= 0) {
                    next = Math.max(fromLsn, groupBeginLsn);
                }
                if (keep < size) {
                    truncated += size - keep;
                    ch.truncate(keep);
                    ch.force(true);
                    stop = true;
                }
                if (groupStartPos >= 0) {
                    stop = true;
                }
            } catch (IOException e) {
                throw new GcStoreException(STORE, p, null, "replay read failed: " + e.getMessage(), e);
            }
            if (stop) {
                // anything after a torn point was never acknowledged as a whole: drop it
                for (int sj = si + 1; sj < segs.size(); sj++) {
                    Path later = segmentName(dir, segs.get(sj)[0]);
                    try {
                        truncated += Files.size(later);
                        Files.deleteIfExists(later);
                    } catch (IOException e) {
                        throw new GcStoreException(STORE, later, null, "cannot drop torn tail: " + e.getMessage(), e);
                    }
                }
            }
        }
        return new Recovery(out, lsns, next, lastOpId, truncated);
    }

    private static void appendAt(UpdateBatch out, LongList lsns, long lsn, int kind, long pbn, long value) {
        out.add(kind, pbn, value);
        lsns.add(lsn);
    }

    /** A growable long array. */
    static final class LongList {
        long[] a = new long[64];
        int size;

        void add(long v) {
            if (size == a.length) {
                a = java.util.Arrays.copyOf(a, size * 2);
            }
            a[size++] = v;
        }

        long get(int i) {
            return a[i];
        }

        void clear() {
            size = 0;
        }
    }
}
