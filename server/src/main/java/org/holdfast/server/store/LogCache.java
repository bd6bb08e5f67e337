package org.holdfast.server.store;

import org.holdfast.common.concurrent.Futures;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntPredicate;

/**
 * The local disk of backend s3 as a cache of the object store, with a size limit and least-recently-used
 * eviction. It holds two kinds of entries, counted against one limit:
 * <ul>
 * <li>sealed data log files whose upload is confirmed: the whole log, read like any local log;
 * eviction deletes the file (through the data store, which closes it under its relocation lock so no
 * read is in flight), and later reads go to ranges;</li>
 * <li>ranges of logs whose local file is gone: fixed-size pieces of the object
 * ({@link Settings#rangeBytes}), fetched with ranged GETs on first read, or ahead of a restore by
 * {@link ReadAhead}, and kept in {@link RangeFiles}.</li>
 * </ul>
 * The active log and logs not yet confirmed uploaded are never entries, so they are never evicted.
 *
 * <p>Why ranges and not whole logs: a log is 256 MiB by default and a restore or a verify usually
 * needs part of it; fetching whole logs would evict as much as it reads. Fixed ranges (rather than
 * exact record spans) make hits a lookup, let neighbouring records share one GET, and let read-ahead
 * coalesce a run of ranges into one GET. A range fetched by one thread is awaited, not fetched again,
 * by others ({@code inflight}). The order of use is kept in an access-ordered map: the working sets
 * here (a few thousand ranges per 10 GiB) make a simple lock cheaper than anything cleverer.
 *
 * <p>Correctness never depends on the cache: every record read from a range is checked (CRC32C, and
 * a frame member's SHA-256) like one read from a file, a range that vanished is fetched again, and a
 * confirmed log's object that is gone reads as corrupt data naming its key.
 */
public final class LogCache implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(LogCache.class.getName());
    private static final String STORE = "log-cache";
    /** The range index that stands for a whole local log in the LRU. */
    private static final int WHOLE_LOG = -1;
    /** At most this many bytes in one read-ahead GET. */
    static final int MAX_GET_BYTES = 8 << 20;

    /**
     * Settings of the cache: its limit in bytes (local uploaded logs plus ranges), the range size, and
     * restore read-ahead (on or off, fetch threads, and how many bytes it may fetch ahead of the reader).
     */
    public record Settings(long limitBytes, int rangeBytes, boolean readAhead, int readAheadThreads, long readAheadBytes) {
        public Settings {
            if (rangeBytes < 4096 || rangeBytes > MAX_GET_BYTES) {
                throw new IllegalArgumentException("the cache's range size must be in 4 KiB..8 MiB, got " + rangeBytes);
            }
            if (limitBytes < 4L * rangeBytes) {
                throw new IllegalArgumentException("the object-store cache must hold at least 4 ranges (" + 4L * rangeBytes
                        + " bytes), got " + limitBytes);
            }
            if (readAheadThreads < 1 || readAheadThreads > 64) {
                throw new IllegalArgumentException("read-ahead threads must be in 1..64, got " + readAheadThreads);
            }
            if (readAheadBytes < rangeBytes) {
                throw new IllegalArgumentException("read-ahead depth must be at least one range (" + rangeBytes + " bytes), got "
                        + readAheadBytes);
            }
        }

        /** 10 GiB, 1 MiB ranges, read-ahead on with 4 threads and 64 MiB ahead. */
        public static Settings defaults() {
            return new Settings(10L << 30, 1 << 20, true, 4, 64L << 20);
        }

        /** Ranges read ahead at most: the depth, but never more than half the cache, so ranges fetched ahead are not evicted before use. */
        int readAheadRanges() {
            return (int) Math.max(1, Math.min(readAheadBytes, limitBytes / 2) / rangeBytes);
        }
    }

    /** Counters since open, and the bytes cached now against the limit. */
    public record Stats(long hits, long misses, long readAheadWaits, long rangeGets, long bytesFetched, long evictions,
                        long cachedBytes, long limitBytes) {
    }

    /** Where a range that is not cached comes from: the log's object. */
    interface Source {
        /** Up to {@code length} bytes of log {@code logId}'s object from {@code offset} (fewer at its end). */
        byte[] get(int logId, long offset, int length);

        /** The object's key, for error messages. */
        String name(int logId);
    }

    private final Settings settings;
    private final RangeFiles files;
    private final Source source;
    // entry key (log id, range index) -> bytes, least recently used first; guarded by this
    private final LinkedHashMap<Long, Long> lru = new LinkedHashMap<>(1024, 0.75f, true);
    private long bytes;
    private final ConcurrentHashMap<Long, CompletableFuture<byte[]>> inflight = new ConcurrentHashMap<>();
    private final ExecutorService fetchers;
    private final ExecutorService evictor;
    private final ExecutorService writer;
    private volatile IntPredicate logEvictor = id -> false;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder waits = new LongAdder();
    private final LongAdder gets = new LongAdder();
    private final LongAdder fetched = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private volatile boolean closed;
    // bumped by forgetLog: a fetch that began before cannot publish its bytes (a compaction may have replaced the object)
    private long generation;
    // logs being relocated by a compaction: nothing of theirs is cached until it ends
    private final java.util.Set<Integer> relocating = new java.util.HashSet<>();

    /** A cache of {@code files}'s directory filling from {@code source}; ranges already on disk are kept if {@code uploaded} still holds their log. */
    LogCache(Settings settings, RangeFiles files, Source source, IntPredicate uploaded) {
        this.settings = settings;
        this.files = files;
        this.source = source;
        this.fetchers = pool("holdfast-read-ahead", settings.readAheadThreads());
        this.evictor = pool("holdfast-cache-evict", 1);
        this.writer = pool("holdfast-cache-write", 1);
        synchronized (this) {
            for (RangeFiles.Found f : files.scan()) {
                if (uploaded.test(f.logId())) {
                    bytes += f.bytes();
                    lru.put(key(f.logId(), f.index()), f.bytes());
                } else {
                    files.delete(f.logId(), f.index()); // its log was dropped: the range can never be read again
                }
            }
        }
    }

    private static ExecutorService pool(String name, int threads) {
        AtomicInteger n = new AtomicInteger();
        return Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    public Settings settings() {
        return settings;
    }

    /**
     * Called once by the data store: adopts its local sealed logs that are confirmed uploaded
     * ({@code localLogs}: id to bytes, least recently used first), evicts down to the limit, and from
     * then on evicts a local log through {@code evictLocalLog} (false if it could not go).
     */
    void attach(Map<Integer, Long> localLogs, IntPredicate evictLocalLog) {
        this.logEvictor = evictLocalLog;
        synchronized (this) {
            for (Map.Entry<Integer, Long> e : localLogs.entrySet()) {
                enter(key(e.getKey(), WHOLE_LOG), e.getValue());
            }
        }
        trim(Long.MIN_VALUE);
    }

    /** Sealed log {@code id}'s upload is confirmed: its local file of {@code size} bytes is now cache. */
    void addLog(int id, long size) {
        admit(key(id, WHOLE_LOG), size);
    }

    /** A read of local log {@code id}: counted as a hit and made most recent if it is a cache entry. */
    void touchLog(int id) {
        boolean tracked;
        synchronized (this) {
            tracked = lru.get(key(id, WHOLE_LOG)) != null;
        }
        if (tracked) {
            hits.increment();
        }
    }

    /**
     * Compaction is about to replace log {@code id}'s object (same id, new epoch): its ranges go now,
     * before the catalog switches, and none is cached until {@link #endRelocation}, so no range of the
     * old object survives a crash or outlives the switch. Called under the store's exclusive
     * relocation lock (no read in flight).
     */
    void beginRelocation(int id) {
        synchronized (this) {
            relocating.add(id);
        }
        forgetLog(id);
    }

    /** The relocation of log {@code id} ended (switched or undone); its local file of {@code size} bytes (0: none) is cache again. */
    void endRelocation(int id, long size) {
        forgetLog(id);
        synchronized (this) {
            relocating.remove(id);
        }
        if (size > 0) {
            addLog(id, size);
        }
    }

    /** Log {@code id} is gone for good (compaction dropped it) or replaced: its entries, ranges and fetches in flight go. */
    void forgetLog(int id) {
        synchronized (this) {
            generation++;
            // their fetches see the new generation and publish nothing; a waiter (none should be: the
            // caller holds the relocation lock exclusively) gets an error, not a hang
            for (Long k : List.copyOf(inflight.keySet())) {
                CompletableFuture<byte[]> f = logOf(k) == id ? inflight.remove(k) : null;
                if (f != null) {
                    f.completeExceptionally(new StoreException(STORE, source.name(id), null,
                            "data log " + id + " was relocated by compaction while a range of it was fetched; read it again", null));
                }
            }
            Iterator<Map.Entry<Long, Long>> it = lru.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<Long, Long> e = it.next();
                if (logOf(e.getKey()) == id) {
                    it.remove();
                    bytes -= e.getValue();
                    if (indexOf(e.getKey()) != WHOLE_LOG) {
                        deleteRange(id, indexOf(e.getKey()));
                    }
                }
            }
        }
    }

    /**
     * Reads {@code len} bytes at {@code offset} of log {@code logId}, whose local file is gone, into
     * {@code dst} from {@code dstPos}: from cached ranges, awaiting ranges being fetched ahead, and
     * fetching the others now. Leaves {@code dst} as a file read does (position and limit at the end).
     */
    void read(int logId, long offset, ByteBuffer dst, int dstPos, int len, long pbn) {
        int rb = settings.rangeBytes();
        long pos = offset;
        int at = dstPos;
        int left = len;
        while (left > 0) {
            int index = (int) (pos / rb);
            int from = (int) (pos % rb);
            int n = Math.min(left, rb - from);
            readRange(logId, index, from, dst, at, n, pbn);
            pos += n;
            at += n;
            left -= n;
        }
        dst.limit(dstPos + len).position(dstPos + len);
    }

    private void readRange(int logId, int index, int from, ByteBuffer dst, int at, int n, long pbn) {
        long k = key(logId, index);
        CompletableFuture<byte[]> f = inflight.get(k);
        if (f == null) {
            long size = files.read(logId, index, from, dst, at, n);
            if (size >= from + n) {
                hits.increment();
                synchronized (this) {
                    lru.get(k);
                }
                return;
            }
            if (size >= 0) {
                throw beyondEnd(logId, (long) index * settings.rangeBytes() + size, pbn);
            }
            CompletableFuture<byte[]> mine = new CompletableFuture<>();
            f = inflight.putIfAbsent(k, mine);
            if (f == null) {
                misses.increment();
                f = mine;
                fetch(logId, index, 1, true);
            } else {
                countWait(f);
            }
        } else {
            countWait(f);
        }
        byte[] b = Futures.join(f);
        if (b.length < from + n) {
            throw beyondEnd(logId, (long) index * settings.rangeBytes() + b.length, pbn);
        }
        dst.clear().position(at).limit(at + n);
        dst.put(b, from, n);
    }

    /** A range fetched already (its file still being written) is a hit; one still being fetched ahead is a wait. */
    private void countWait(CompletableFuture<byte[]> f) {
        if (f.isDone()) {
            hits.increment();
        } else {
            waits.increment();
        }
    }

    private CorruptDataException beyondEnd(int logId, long end, long pbn) {
        return new CorruptDataException(STORE, source.name(logId), "pbn " + pbn,
                "the record lies beyond the end of the object (" + end + " bytes): the object is shorter than the log it was uploaded from");
    }

    /**
     * Claims range {@code index} of log {@code logId} for a read-ahead fetch: true if it is neither
     * cached nor being fetched, and the caller must now fetch it (as part of a {@link #fetchAhead} run).
     */
    boolean claim(int logId, int index) {
        long k = key(logId, index);
        synchronized (this) {
            if (lru.containsKey(k)) {
                return false;
            }
        }
        return inflight.putIfAbsent(k, new CompletableFuture<>()) == null;
    }

    /** Fetches the claimed ranges {@code first..first+count-1} of log {@code logId} with one GET on a read-ahead thread. */
    void fetchAhead(int logId, int first, int count) {
        try {
            fetchers.execute(() -> {
                try {
                    fetch(logId, first, count, false);
                } catch (RuntimeException e) {
                    // the readers that need these ranges get the failure from their futures
                    LOG.log(Level.DEBUG, "read-ahead of " + source.name(logId) + " failed: " + e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            fail(logId, first, count, new StoreException(STORE, source.name(logId), null, "the cache is closed", e));
        }
    }

    /**
     * One GET for the claimed ranges {@code first..first+count-1}: hands each to whoever waits for it,
     * then stores it, on the cache's writer thread if {@code writeLater} (a reader's own miss need not
     * wait for the file write and its fsync).
     */
    private void fetch(int logId, int first, int count, boolean writeLater) {
        int rb = settings.rangeBytes();
        long gen;
        synchronized (this) {
            gen = generation;
        }
        byte[] b;
        try {
            b = source.get(logId, (long) first * rb, count * rb);
        } catch (RuntimeException e) {
            fail(logId, first, count, e);
            throw e;
        }
        gets.increment();
        fetched.add(b.length);
        byte[][] ranges = new byte[count][];
        @SuppressWarnings("unchecked")
        CompletableFuture<byte[]>[] mine = new CompletableFuture[count];
        synchronized (this) {
            if (generation != gen) {
                return; // the log was relocated or dropped meanwhile: these bytes may be the old object's
            }
            for (int i = 0; i < count; i++) {
                int from = Math.min(b.length, i * rb);
                int n = Math.min(rb, b.length - from);
                ranges[i] = count == 1 && n == b.length ? b : Arrays.copyOfRange(b, from, from + n);
                mine[i] = inflight.get(key(logId, first + i));
                if (mine[i] != null) {
                    mine[i].complete(ranges[i]); // waiters go on from memory while the range is written
                }
            }
        }
        if (!writeLater) {
            keep(logId, first, ranges, mine, gen);
            return;
        }
        try {
            writer.execute(() -> keep(logId, first, ranges, mine, gen));
        } catch (RejectedExecutionException e) {
            keep(logId, first, ranges, mine, gen); // closing
        }
    }

    /**
     * Writes fetched ranges to their files and counts them in; only then they stop being in flight.
     * Under the monitor, so that a relocation or drop of the log ({@link #forgetLog}) either comes
     * before (and the bytes, perhaps the old object's, are not kept) or after (and deletes the files).
     */
    private void keep(int logId, int first, byte[][] ranges, CompletableFuture<byte[]>[] mine, long gen) {
        for (int i = 0; i < ranges.length; i++) {
            long k = key(logId, first + i);
            synchronized (this) {
                if (ranges[i].length > 0 && !closed && generation == gen && !relocating.contains(logId)) {
                    try {
                        files.write(logId, first + i, ranges[i], 0, ranges[i].length);
                        enter(k, ranges[i].length);
                    } catch (StoreException e) {
                        // served from memory this once; fetched again next time
                        LOG.log(Level.WARNING, "caching a range of " + source.name(logId) + " failed: " + e.getMessage());
                    }
                }
                // only now: a reader that finds neither a future nor a file fetches the range again
                if (mine[i] != null) {
                    inflight.remove(k, mine[i]);
                }
            }
            trim(k);
        }
    }

    private void fail(int logId, int first, int count, RuntimeException e) {
        for (int i = 0; i < count; i++) {
            CompletableFuture<byte[]> f = inflight.remove(key(logId, first + i));
            if (f != null) {
                f.completeExceptionally(e);
            }
        }
    }

    private void admit(long k, long size) {
        synchronized (this) {
            enter(k, size);
        }
        trim(k);
    }

    /** Puts entry {@code k} of {@code size} bytes as the most recent and counts it; the caller holds the monitor. */
    private void enter(long k, long size) {
        Long old = lru.put(k, size);
        bytes += size - (old == null ? 0 : old);
    }

    /** Evicts least recently used entries (never {@code keep}) until the cache is within its limit. */
    private void trim(long keep) {
        List<Integer> logs = new ArrayList<>();
        synchronized (this) {
            Iterator<Map.Entry<Long, Long>> it = lru.entrySet().iterator();
            while (bytes > settings.limitBytes() && it.hasNext()) {
                Map.Entry<Long, Long> e = it.next();
                long k = e.getKey();
                if (k == keep) {
                    continue;
                }
                it.remove();
                bytes -= e.getValue();
                evictions.increment();
                if (indexOf(k) == WHOLE_LOG) {
                    logs.add(logOf(k));
                } else {
                    deleteRange(logOf(k), indexOf(k)); // a reader with the file open still reads it whole
                }
            }
        }
        if (!logs.isEmpty()) {
            try {
                // not here: the caller may be a reader holding the store's shared relocation lock, which eviction takes exclusively
                evictor.execute(() -> evictLogs(logs));
            } catch (RejectedExecutionException e) {
                // closing: the files stay, and the next start trims the cache again
            }
        }
    }

    private void evictLogs(List<Integer> ids) {
        for (int id : ids) {
            try {
                if (!logEvictor.test(id)) {
                    LOG.log(Level.INFO, "data log {0} stays on local disk (in use); the next start counts it again", id);
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "evicting data log " + id + " from the cache failed: " + e.getMessage());
            }
        }
    }

    private void deleteRange(int logId, int index) {
        try {
            files.delete(logId, index);
        } catch (StoreException e) {
            LOG.log(Level.WARNING, "deleting a cached range failed: " + e.getMessage());
        }
    }

    /** Waits until the range writes and then the evictions scheduled so far have run (tests). */
    public void awaitEvictions(long timeoutMillis) {
        try {
            writer.submit(() -> { }).get(timeoutMillis, TimeUnit.MILLISECONDS);
            evictor.submit(() -> { }).get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("evictions did not finish within " + timeoutMillis + " ms", e);
        }
    }

    /** Whether range {@code index} of log {@code logId} is cached (tests, read-ahead). */
    synchronized boolean cached(int logId, int index) {
        return lru.containsKey(key(logId, index));
    }

    public Stats stats() {
        long b;
        synchronized (this) {
            b = bytes;
        }
        return new Stats(hits.sum(), misses.sum(), waits.sum(), gets.sum(), fetched.sum(), evictions.sum(), b, settings.limitBytes());
    }

    /** Stops read-ahead and eviction; readers still waiting for a range fetched ahead get a failure, not a hang. Idempotent. */
    @Override
    public void close() {
        closed = true;
        fetchers.shutdownNow();
        writer.shutdown();
        evictor.shutdown();
        try {
            fetchers.awaitTermination(30, TimeUnit.SECONDS);
            writer.awaitTermination(30, TimeUnit.SECONDS);
            evictor.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Long k : List.copyOf(inflight.keySet())) {
            fail(logOf(k), indexOf(k), 1, new StoreException(STORE, source.name(logOf(k)), null, "the cache is closed", null));
        }
    }

    private static long key(int logId, int index) {
        return (long) logId << 32 | index & 0xFFFFFFFFL;
    }

    private static int logOf(long key) {
        return (int) (key >>> 32);
    }

    private static int indexOf(long key) {
        return (int) key;
    }
}
