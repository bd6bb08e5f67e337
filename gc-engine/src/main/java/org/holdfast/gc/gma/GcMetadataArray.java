package org.holdfast.gc.gma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;

/**
 * The GC metadata array on disk ({@link GmaFormat}), with a bounded cache of chunks and one lock
 * per chunk (striped). Whoever reads or changes a chunk holds its lock; {@link #write} puts the
 * chunk into its other frame, {@link #sync} makes all written chunks durable and then records their
 * generations ({@link GenerationTable}). This class owns its file channel and the table and closes
 * them in {@link #close()}.
 */
public final class GcMetadataArray implements AutoCloseable {
    private static final String STORE = "gma";
    private static final int LOCK_STRIPES = 1024;

    private final Path file;
    private final FileChannel channel;
    private final GenerationTable generations;
    private final ReentrantLock[] locks = new ReentrantLock[LOCK_STRIPES];
    private final Map<Long, GmaChunk> cache;
    private final ByteBuffer readBuf = ByteBuffer.allocate(GmaFormat.CHUNK_BYTES * GmaFormat.FRAMES_PER_CHUNK);
    private volatile long chunkCount;

    private GcMetadataArray(Path file, FileChannel channel, GenerationTable generations, int cacheChunks) throws IOException {
        this.file = file;
        this.channel = channel;
        this.generations = generations;
        for (int i = 0; i < LOCK_STRIPES; i++) {
            locks[i] = new ReentrantLock();
        }
        int capacity = Math.max(4, cacheChunks);
        this.cache = new LinkedHashMap<>(capacity * 2, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, GmaChunk> eldest) {
                // Only clean chunks leave; a dirty one is being changed under its lock right now.
                return size() > capacity && !eldest.getValue().dirty();
            }
        };
        long frameBytes = (long) GmaFormat.CHUNK_BYTES * GmaFormat.FRAMES_PER_CHUNK;
        this.chunkCount = (channel.size() + frameBytes - 1) / frameBytes;
    }

    /** Opens (creating if needed) {@code dir/gma.dat}. */
    public static GcMetadataArray open(Path dir, int cacheChunks) {
        Path file = dir.resolve("gma.dat");
        try {
            Files.createDirectories(dir);
            FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            GenerationTable gens;
            try {
                gens = GenerationTable.open(dir);
            } catch (RuntimeException e) {
                ch.close();
                throw e;
            }
            return new GcMetadataArray(file, ch, gens, cacheChunks);
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "cannot open: " + e.getMessage(), e);
        }
    }

    public Path file() {
        return file;
    }

    /** Chunks that have ever been written (PBNs beyond them read as unused). */
    public long chunkCount() {
        return chunkCount;
    }

    /** The lock guarding chunk {@code chunk}; hold it around {@link #load} and {@link #write}. */
    public ReentrantLock lock(long chunk) {
        return locks[(int) Math.floorMod(chunk, (long) LOCK_STRIPES)];
    }

    /** The chunk, from cache or disk; a chunk never written comes back empty. Caller holds its lock. */
    public GmaChunk load(long chunk) {
        if (!lock(chunk).isHeldByCurrentThread()) {
            throw new IllegalStateException("chunk " + chunk + " loaded without its lock");
        }
        synchronized (cache) {
            GmaChunk c = cache.get(chunk);
            if (c != null) {
                return c;
            }
        }
        GmaChunk c = readChunk(chunk);
        synchronized (cache) {
            cache.put(chunk, c);
        }
        return c;
    }

    private GmaChunk readChunk(long index) {
        GmaChunk c = new GmaChunk(index);
        if (index >= chunkCount) {
            return c;
        }
        ByteBuffer frames;
        synchronized (readBuf) {
            readBuf.clear();
            try {
                long pos = GmaFormat.frameOffset(index, 0);
                while (readBuf.hasRemaining()) {
                    int n = channel.read(readBuf, pos + readBuf.position());
                    if (n < 0) {
                        break;
                    }
                }
            } catch (IOException e) {
                throw new GcStoreException(STORE, file, "chunk " + index, "read failed: " + e.getMessage(), e);
            }
            // zero-fill a short read: a frame beyond end of file was never written
            while (readBuf.hasRemaining()) {
                readBuf.put((byte) 0);
            }
            frames = ByteBuffer.allocate(readBuf.capacity());
            readBuf.flip();
            frames.put(readBuf);
        }
        ByteBuffer a = frames.duplicate().position(0).limit(GmaFormat.CHUNK_BYTES).slice();
        ByteBuffer b = frames.duplicate().position(GmaFormat.CHUNK_BYTES).limit(2 * GmaFormat.CHUNK_BYTES).slice();
        boolean aOk = GmaChunk.valid(a, index);
        boolean bOk = GmaChunk.valid(b, index);
        int recorded = generations.recorded(index);
        int pick;
        if (aOk && bOk) {
            long la = GmaChunk.headerLsn(a);
            long lb = GmaChunk.headerLsn(b);
            if (la != lb) {
                pick = lb > la ? 1 : 0;
            } else {
                // same LSN: the later write only changed FREED marks; it is one generation ahead
                pick = GmaChunk.generation(b) == ((GmaChunk.generation(a) + 1) & 0xFF) ? 1 : 0;
            }
        } else if (aOk || bOk) {
            pick = aOk ? 0 : 1;
            requireNotBehind(index, GmaChunk.generation(aOk ? a : b), recorded);
        } else if (allZero(a) && allZero(b)) {
            if (recorded >= 0) {
                throw new GcCorruptException(STORE, file, "chunk " + index, "both frames read as zeros, but "
                        + generations.file().getFileName() + " records generation " + recorded + " as durable");
            }
            return c;
        } else {
            throw new GcCorruptException(STORE, file, "chunk " + index, "both frames fail their checksum");
        }
        c.load(pick == 0 ? a : b);
        c.currentFrame = pick;
        return c;
    }

    /**
     * One frame is damaged and the other, of generation {@code survivor}, is valid. If the table
     * recorded a later generation as durable, the damaged frame was the newest durable version:
     * its updates may be older than the checkpoint, so no replay restores them.
     */
    private void requireNotBehind(long index, int survivor, int recorded) {
        if (recorded < 0) {
            return; // a store from before the table, or a chunk whose first write is not yet recorded
        }
        int behind = (recorded - survivor) & 0xFF;
        if (behind != 0 && behind < 128) {
            throw new GcCorruptException(STORE, file, "chunk " + index, "its newest frame (generation " + recorded
                    + ", durable by " + generations.file().getFileName() + ") fails its checksum, and the other frame is "
                    + "an older version (generation " + survivor + "): the updates only the damaged frame held are lost");
        }
    }

    private static boolean allZero(ByteBuffer b) {
        for (int i = 0; i < b.limit(); i += 8) {
            if (b.getLong(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Writes the chunk into its other frame (not yet durable: see {@link #sync}). Caller holds its lock. */
    public void write(GmaChunk c) {
        if (!lock(c.index()).isHeldByCurrentThread()) {
            throw new IllegalStateException("chunk " + c.index() + " written without its lock");
        }
        int frame = c.currentFrame == 0 ? 1 : 0;
        ByteBuffer bytes = c.seal();
        long pos = GmaFormat.frameOffset(c.index(), frame);
        try {
            while (bytes.hasRemaining()) {
                channel.write(bytes, pos + bytes.position());
            }
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, "chunk " + c.index(), "write failed: " + e.getMessage(), e);
        }
        c.written(frame);
        generations.written(c.index(), c.generation);
        synchronized (cache) {
            if (c.index() >= chunkCount) {
                chunkCount = c.index() + 1;
            }
            cache.put(c.index(), c);
        }
    }

    /** Forces every written chunk to disk, then records their generations as durable. */
    public void sync() {
        // taken before the force: a write noted later may not be durable yet
        Map<Long, Integer> written = generations.takeUnrecorded();
        try {
            channel.force(false);
        } catch (IOException e) {
            written.forEach(generations::written);
            throw new GcStoreException(STORE, file, null, "fsync failed: " + e.getMessage(), e);
        }
        generations.record(written);
    }

    /**
     * Reads every chunk on disk and checks its frames, so that damage is found at start rather than
     * by the first sweep that needs the chunk. Reads the file once, sequentially; fills no cache.
     * Returns the number of chunks checked.
     *
     * @throws GcCorruptException naming the first chunk whose frames both fail their checks
     */
    public long verify() {
        long n = chunkCount;
        for (long ci = 0; ci < n; ci++) {
            ReentrantLock l = lock(ci);
            l.lock();
            try {
                readChunk(ci);
            } finally {
                l.unlock();
            }
        }
        return n;
    }

    /**
     * Visits every USED slot of chunks below {@code chunkLimit} in PBN order, chunk by chunk under
     * each chunk's lock.
     */
    public void scan(long chunkLimit, SlotVisitor visitor) {
        long n = Math.max(chunkLimit, chunkCount);
        for (long ci = 0; ci < n; ci++) {
            ReentrantLock l = lock(ci);
            l.lock();
            try {
                GmaChunk c = load(ci);
                for (int s = 1; s <= GmaFormat.PBNS_PER_CHUNK; s++) {
                    int flags = c.flags(s);
                    if ((flags & GmaFormat.FLAG_USED) != 0) {
                        visitor.visit(GmaFormat.pbnAt(ci, s), c.rc(s), c.pins(s), flags, c.expiry(s));
                    }
                }
            } finally {
                l.unlock();
            }
        }
    }

    /** Drops the cache (tests use it to prove state comes from disk). */
    public void evictAll() {
        synchronized (cache) {
            cache.values().removeIf(c -> !c.dirty());
        }
    }

    /** Closes the GMA file, then the generation table (both idempotent). */
    @Override
    public void close() {
        try {
            closeChannel(channel, STORE, file);
        } finally {
            generations.close();
        }
    }

    /** Closes {@code channel} if open, translating the failure (shared with {@link GenerationTable}). */
    static void closeChannel(FileChannel channel, String store, Path file) {
        try {
            if (channel.isOpen()) {
                channel.close();
            }
        } catch (IOException e) {
            throw new GcStoreException(store, file, null, "close failed: " + e.getMessage(), e);
        }
    }
}
