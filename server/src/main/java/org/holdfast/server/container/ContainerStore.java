package org.holdfast.server.container;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import org.holdfast.server.store.StoreException;

/**
 * Where containers live (thesis 5.8): an in-memory cache bounded by S_container bytes, a secondary
 * buffer of dirty containers evicted from the cache that a background thread writes to disk, and the
 * container files under {@code containers/}.
 *
 * <p>Why a buffer: eviction happens on the ingest path; writing a 1 MiB container there would stall
 * the stream. The buffer is bounded (a quarter of the cache); when it is full the evicting thread
 * writes one container itself, so ingest slows down rather than memory growing.
 *
 * <p>Containers handed out by {@link #acquire} or {@link #create} are pinned until
 * {@link #release}: a pinned container is never evicted, so changes made through it are never lost.
 * Loading a container purges its stale entries first ({@link StalePbns}).
 */
public final class ContainerStore implements AutoCloseable {
    private final Path dir;
    private final int maxFingerprints;
    private final int k;
    private final long cacheBytes;
    private final long bufferBytes;
    private final StalePbns stale;

    private final Map<Integer, Container> primary = new HashMap<>();
    private final LinkedHashMap<Integer, Container> buffer = new LinkedHashMap<>();
    private final Map<Integer, AtomicInteger> pins = new HashMap<>();
    private final AtomicInteger nextId;
    private long[] purgedSeqs = new long[1024];
    private final AtomicLong clock = new AtomicLong();

    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong loads = new AtomicLong();
    private final AtomicLong absent = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong evictions = new AtomicLong();
    private final Thread flusher;
    private volatile boolean closed;

    /**
     * Opens the store in {@code dir} (created if missing).
     *
     * @param cacheBytes S_container: bytes of containers kept in memory
     */
    public ContainerStore(Path dir, int maxFingerprints, int k, long cacheBytes, StalePbns stale) {
        this.dir = dir;
        this.maxFingerprints = maxFingerprints;
        this.k = k;
        this.cacheBytes = cacheBytes;
        this.bufferBytes = Math.max(cacheBytes / 4, 1);
        this.stale = stale;
        int max = 0;
        try {
            Files.createDirectories(dir);
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                for (Path p : ds) {
                    String name = p.getFileName().toString();
                    if (name.endsWith(".tmp")) {
                        Files.deleteIfExists(p);
                        continue;
                    }
                    int id = ContainerFile.idOf(name);
                    if (id > 0) {
                        max = Math.max(max, id);
                        setPurgedSeq(id, readPurgedSeq(p));
                    }
                }
            }
        } catch (IOException e) {
            throw StoreException.translate("container-store", dir.toString(), null, e);
        }
        nextId = new AtomicInteger(max + 1);
        flusher = new Thread(this::flushLoop, "holdfast-container-flusher");
        flusher.setDaemon(true);
        flusher.start();
    }

    private static long readPurgedSeq(Path p) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(32);
            while (b.hasRemaining() && ch.read(b) > 0) {
                // fill the header
            }
            return b.position() == 32 ? b.getLong(24) : 0;
        }
    }

    private synchronized void setPurgedSeq(int id, long seq) {
        if (id >= purgedSeqs.length) {
            purgedSeqs = Arrays.copyOf(purgedSeqs, Math.max(id + 1, purgedSeqs.length * 2));
        }
        purgedSeqs[id] = seq;
    }

    /** Creates a new empty container, pinned. */
    public Container create() {
        int id = nextId.getAndIncrement();
        Container c = new Container(id, maxFingerprints, k);
        c.purge(p -> false, stale.lastSeq());
        synchronized (this) {
            setPurgedSeq(id, c.purgedSeq());
            primary.put(id, c);
            pin(id);
            c.setLastAccess(clock.incrementAndGet());
        }
        evictIfNeeded(true);
        return c;
    }

    /** The container {@code id}, pinned, loading it if needed; null if it does not exist (or its file was torn). */
    public Container acquire(int id) {
        Container cached = inMemory(id, true);
        if (cached != null) {
            hits.incrementAndGet();
            return cached;
        }
        if (id <= 0 || id >= nextId.get()) {
            return null;
        }
        Container loaded = ContainerFile.read(dir, id, maxFingerprints, k);
        if (loaded == null) {
            absent.incrementAndGet();
            return null;
        }
        long seq = stale.lastSeq();
        if (loaded.purgedSeq() < seq) {
            loaded.purge(stale::contains, seq);
        }
        synchronized (this) {
            Container c = primary.get(id);
            if (c == null) {
                c = buffer.remove(id);
            }
            if (c == null) {
                c = loaded;
                loads.incrementAndGet();
                setPurgedSeq(id, c.purgedSeq());
            }
            primary.put(id, c);
            pin(id);
            c.setLastAccess(clock.incrementAndGet());
            loaded = c;
        }
        evictIfNeeded(true);
        return loaded;
    }

    /**
     * As {@link #acquire}, but only a container already in memory (cache or secondary buffer); null
     * otherwise, without loading: for a cluster worker's probe, which must add no container I/O.
     * A container taken back from the buffer grows the cache, so it evicts as a load does, but
     * leaves writing the buffer to the flusher (the buffer may exceed its quarter until then).
     */
    public Container acquireIfCached(int id) {
        return inMemory(id, false);
    }

    /** The in-memory part of {@link #acquire}; {@code mayWrite}: an overfull buffer is written on this thread. */
    private Container inMemory(int id, boolean mayWrite) {
        Container c;
        boolean fromBuffer;
        synchronized (this) {
            c = primary.get(id);
            fromBuffer = c == null;
            if (fromBuffer) {
                c = buffer.remove(id);
                if (c == null) {
                    return null;
                }
                primary.put(id, c);
            }
            pin(id);
            c.setLastAccess(clock.incrementAndGet());
        }
        if (fromBuffer) {
            evictIfNeeded(mayWrite);
        }
        return c;
    }

    private void pin(int id) {
        pins.computeIfAbsent(id, x -> new AtomicInteger()).incrementAndGet();
    }

    /** Unpins a container from {@link #acquire} or {@link #create}. */
    public synchronized void release(Container c) {
        AtomicInteger n = pins.get(c.id());
        if (n != null && n.decrementAndGet() <= 0) {
            pins.remove(c.id());
        }
    }

    /**
     * Takes the write lock within {@code timeoutNanos}; false means the container is contended and
     * the caller must use it read-only (thesis 5.8).
     */
    public static boolean tryWrite(Container c, long timeoutNanos) {
        try {
            return c.lock().writeLock().tryLock(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Evicts until the cache fits; {@code mayWrite}: if the buffer overflows, writes its oldest here. */
    private void evictIfNeeded(boolean mayWrite) {
        while (true) {
            Container spill = null;
            synchronized (this) {
                long total = 0;
                Container lru = null;
                for (Container c : primary.values()) {
                    total += c.memoryBytes();
                    if (!pins.containsKey(c.id()) && (lru == null || c.lastAccess() < lru.lastAccess())) {
                        lru = c;
                    }
                }
                if (total <= cacheBytes || lru == null) {
                    return;
                }
                primary.remove(lru.id());
                evictions.incrementAndGet();
                if (lru.isDirty()) {
                    buffer.put(lru.id(), lru);
                    notifyAll();
                    if (mayWrite && bufferedBytes() > bufferBytes) {
                        spill = buffer.values().iterator().next();
                    }
                }
            }
            if (spill != null) {
                writeBuffered(spill);
            }
        }
    }

    private long bufferedBytes() {
        long b = 0;
        for (Container c : buffer.values()) {
            b += c.memoryBytes();
        }
        return b;
    }

    private void flushLoop() {
        while (!closed) {
            Container next;
            synchronized (this) {
                while (buffer.isEmpty() && !closed) {
                    try {
                        wait(1000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    return;
                }
                next = buffer.values().iterator().next();
            }
            try {
                writeBuffered(next);
            } catch (RuntimeException e) {
                // Keep the container buffered; flush() reports the failure to its caller.
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private void writeBuffered(Container c) {
        long mods = write(c);
        synchronized (this) {
            if (buffer.get(c.id()) == c && c.modifications() == mods) {
                buffer.remove(c.id());
            }
        }
    }

    /** Writes one container; returns the modification count the written copy reflects. */
    private long write(Container c) {
        // One writer per container at a time: the flusher, a spilling evictor and flush() share a temp name.
        synchronized (c) {
            return writeExclusive(c);
        }
    }

    private long writeExclusive(Container c) {
        byte[] data;
        long mods;
        c.lock().readLock().lock();
        try {
            data = ContainerFile.encode(c);
            mods = c.modifications();
        } finally {
            c.lock().readLock().unlock();
        }
        ContainerFile.write(dir, c.id(), data);
        writes.incrementAndGet();
        synchronized (this) {
            if (c.modifications() == mods) {
                c.markClean();
            }
            setPurgedSeq(c.id(), c.purgedSeq());
        }
        return mods;
    }

    /**
     * Purges stale entries from the cached containers, then writes every dirty container and forces
     * the directory: after it returns, all recorded fingerprints survive a crash.
     */
    public void flush() {
        List<Container> dirty = new ArrayList<>();
        synchronized (this) {
            dirty.addAll(primary.values());
            dirty.addAll(buffer.values());
        }
        long seq = stale.lastSeq();
        for (Container c : dirty) {
            synchronized (this) {
                if (primary.get(c.id()) != c && buffer.get(c.id()) != c) {
                    continue; // dropped since the snapshot; a reloaded copy may be the current one
                }
            }
            if (c.purgedSeq() < seq) {
                c.lock().writeLock().lock();
                try {
                    c.purge(stale::contains, seq);
                } finally {
                    c.lock().writeLock().unlock();
                }
            }
            if (c.isDirty()) {
                writeBuffered(c);
            }
        }
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // Some file systems refuse to open a directory; the renamed files are forced already.
        }
    }

    /**
     * Loads, purges and rewrites up to {@code max} containers whose files were purged least
     * recently, so that old stale marks can be retired. Returns how many it rewrote.
     */
    public int sweepStale(int max) {
        long seq = stale.lastSeq();
        int done = 0;
        int limit = nextId.get();
        for (int id = 1; id < limit && done < max; id++) {
            long p;
            synchronized (this) {
                p = id < purgedSeqs.length ? purgedSeqs[id] : seq;
            }
            if (p >= seq) {
                continue;
            }
            Container c = acquire(id);
            if (c == null) {
                setPurgedSeq(id, seq);
                continue;
            }
            try {
                c.lock().writeLock().lock();
                try {
                    c.purge(stale::contains, seq);
                } finally {
                    c.lock().writeLock().unlock();
                }
                write(c);
                done++;
            } finally {
                release(c);
            }
        }
        return done;
    }

    /** Smallest purged-through sequence of all containers: stale marks up to it can be retired. */
    public synchronized long minPurgedSeq() {
        long min = Long.MAX_VALUE;
        int limit = nextId.get();
        for (int id = 1; id < limit && id < purgedSeqs.length; id++) {
            Container c = primary.get(id);
            if (c == null) {
                c = buffer.get(id);
            }
            long p = c != null && c.isDirty() ? Math.min(c.purgedSeq(), purgedSeqs[id]) : purgedSeqs[id];
            min = Math.min(min, p);
        }
        return min;
    }

    /** Calls {@code action} with every container id that has a file on disk, in increasing order. */
    public void forEachStoredId(IntConsumer action) {
        List<Integer> ids = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.hfc")) {
            for (Path p : ds) {
                int id = ContainerFile.idOf(p.getFileName().toString());
                if (id > 0) {
                    ids.add(id);
                }
            }
        } catch (IOException e) {
            throw StoreException.translate("container-store", dir.toString(), null, e);
        }
        ids.sort(null);
        for (int id : ids) {
            action.accept(id);
        }
    }

    /** Reads a container straight from disk, bypassing the cache (for rebuilding the SFI). */
    public Container readUncached(int id) {
        Container c = ContainerFile.read(dir, id, maxFingerprints, k);
        if (c == null) {
            absent.incrementAndGet();
        }
        return c;
    }

    /** Bytes of the containers in the cache. */
    public synchronized long cachedBytes() {
        long total = 0;
        for (Container c : primary.values()) {
            total += c.memoryBytes();
        }
        return total;
    }

    /** Bytes of the containers waiting in the secondary buffer. */
    public synchronized long bufferBytes() {
        return bufferedBytes();
    }

    /** Containers in the cache. */
    public synchronized int cachedContainers() {
        return primary.size();
    }

    /** Containers created so far (highest id). */
    public int containerCount() {
        return nextId.get() - 1;
    }

    /** Cache hits of {@link #acquire}. */
    public long hits() {
        return hits.get();
    }

    /** Containers loaded from disk. */
    public long loads() {
        return loads.get();
    }

    /** Containers asked for whose file was missing or torn. */
    public long absent() {
        return absent.get();
    }

    /** Container files written. */
    public long writes() {
        return writes.get();
    }

    /** Containers evicted from the cache. */
    public long evictions() {
        return evictions.get();
    }

    /** Drops every cached container without writing (tests use it to force reloads). */
    public synchronized void dropCacheForTest() {
        primary.values().removeIf(c -> !c.isDirty() && !pins.containsKey(c.id()));
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        flush();
        closed = true;
        synchronized (this) {
            notifyAll();
        }
        try {
            flusher.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
