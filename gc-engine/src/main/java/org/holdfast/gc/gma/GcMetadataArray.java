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
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;

/**
 * The GC metadata array on disk ({@link GmaFormat}), with a bounded cache of chunks and one lock
 * per chunk (striped). Whoever reads or changes a chunk holds its lock; {@link #write} appends the
 * chunk to the double-write journal, {@link #sync} forces the journal, writes the chunks in place,
 * forces the GMA file, records their generations ({@link GenerationTable}) and empties the journal.
 * Open mends chunks a crash tore from the journal and converts a format-1 file. This class owns its
 * file channel, the journal and the table and closes them in {@link #close()}.
 */
public final class GcMetadataArray implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GcMetadataArray.class.getName());
    private static final String STORE = "gma";
    private static final int LOCK_STRIPES = 1024;

    private final Path file;
    private final GmaLayout layout;
    private final FileChannel channel;
    private final GenerationTable generations;
    private final DoubleWriteJournal journal;
    private final ReentrantLock[] locks = new ReentrantLock[LOCK_STRIPES];
    private final Map<Long, GmaChunk> cache;
    private final ByteBuffer readBuf = ByteBuffer.allocate(GmaFormat.CHUNK_BYTES);
    private volatile long chunkCount;

    private GcMetadataArray(Path file, GmaLayout layout, FileChannel channel, GenerationTable generations, DoubleWriteJournal journal,
            int cacheChunks) throws IOException {
        this.file = file;
        this.layout = layout;
        this.channel = channel;
        this.generations = generations;
        this.journal = journal;
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
        recover();
        this.chunkCount = (channel.size() + GmaFormat.CHUNK_BYTES - 1) / GmaFormat.CHUNK_BYTES;
    }

    /** Opens (creating if needed) {@code dir/gma.dat}, converting format 1 and mending torn writes. */
    public static GcMetadataArray open(Path dir, int cacheChunks) {
        return open(dir, cacheChunks, PbnRange.STANDALONE);
    }

    /**
     * As {@link #open(Path, int)} for the PBNs of {@code range} ({@link GmaLayout}): a new GMA records
     * the range ({@code gma.range}); one made for another range is refused, nothing changed.
     */
    public static GcMetadataArray open(Path dir, int cacheChunks, PbnRange range) {
        Path file = dir.resolve(GmaFormat.FILE);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "cannot open: " + e.getMessage(), e);
        }
        GmaRangeFile.bind(dir, range); // before anything is created or converted
        GenerationTable gens = null;
        DoubleWriteJournal journal = null;
        FileChannel ch = null;
        try {
            Files.createDirectories(dir);
            gens = GenerationTable.open(dir);
            GmaV1Migration.dropLeftover(file);
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            if (GmaV1Migration.isV1(ch)) {
                long v1Bytes = ch.size();
                long chunks = GmaV1Migration.convert(file, ch, gens);
                ch.close();
                ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                // the one conversion an upgrade makes at start that an older release cannot read back:
                // the operator must learn it from the log, not from a failed downgrade
                LOG.log(System.Logger.Level.INFO, "upgraded GC metadata " + file + " from format 1 to format 2 ("
                        + chunks + " chunks, " + v1Bytes + " -> " + ch.size() + " bytes); a release before GMA format 2"
                        + " cannot open this data directory any more: to roll back, restore the copy of the data"
                        + " directory taken before the upgrade (docs/operations.md, \"Upgrading\")");
            }
            journal = DoubleWriteJournal.open(dir);
            return new GcMetadataArray(file, new GmaLayout(range), ch, gens, journal, cacheChunks);
        } catch (IOException | RuntimeException e) {
            closeQuietly(ch, journal, gens, e);
            if (e instanceof IOException io) {
                throw new GcStoreException(STORE, file, null, "cannot open: " + io.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
    }

    private static void closeQuietly(FileChannel ch, DoubleWriteJournal journal, GenerationTable gens, Exception failure) {
        try {
            if (ch != null) {
                ch.close();
            }
            if (journal != null) {
                journal.close();
            }
            if (gens != null) {
                gens.close();
            }
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * Puts back every chunk whose journal copy is newer than the one in place (a crash came between
     * forcing the journal and forcing the GMA), then empties the journal. A copy older than the
     * generation {@code gma.gen} records is not used: the chunk in place then fails its checksum at
     * the first read and is reported as damage.
     */
    private void recover() {
        ByteBuffer current = ByteBuffer.allocate(GmaFormat.CHUNK_BYTES);
        long[] mended = {0};
        journal.recover((chunk, copy) -> {
            readInPlace(chunk, current);
            boolean inPlace = GmaChunk.valid(current, chunk);
            if (inPlace ? !GmaChunk.newer(copy, current) : GenerationTable.behind(GmaChunk.generation(copy), generations.recorded(chunk))) {
                return;
            }
            writeInPlace(chunk, copy.duplicate().clear());
            mended[0]++;
        });
        if (mended[0] > 0) {
            force();
        }
        journal.reset();
    }

    public Path file() {
        return file;
    }

    /** Which chunk and slot hold a PBN (the GMA's range). */
    public GmaLayout layout() {
        return layout;
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
        GmaChunk c = new GmaChunk(index, layout);
        if (index >= chunkCount) {
            return c;
        }
        synchronized (readBuf) {
            // a chunk written since the last sync is newest in the journal (it may have left the cache)
            boolean pending;
            synchronized (journal) {
                pending = journal.readPending(index, readBuf);
            }
            if (!pending) {
                readInPlace(index, readBuf);
            }
            if (c.load(readBuf)) {
                return c;
            }
            int recorded = generations.recorded(index);
            if (allZero(readBuf)) {
                if (recorded >= 0) {
                    throw new GcCorruptException(STORE, file, "chunk " + index, "it reads as zeros, but "
                            + generations.file().getFileName() + " records generation " + recorded + " as durable");
                }
                return c;
            }
            String version = recorded >= 0 ? "generation " + recorded + ", durable by " + generations.file().getFileName()
                    : "never recorded durable";
            throw new GcCorruptException(STORE, file, "chunk " + index, "it fails its checksum (" + version + ") and "
                    + journal.file().getFileName() + " holds no copy of it: its updates are lost");
        }
    }

    /** Reads chunk {@code index} from its place into {@code into}, zero-filled past the end of the file. */
    private void readInPlace(long index, ByteBuffer into) {
        into.clear();
        try {
            long pos = GmaFormat.chunkOffset(index);
            while (into.hasRemaining()) {
                if (channel.read(into, pos + into.position()) < 0) {
                    break;
                }
            }
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, "chunk " + index, "read failed: " + e.getMessage(), e);
        }
        // a chunk beyond the end of the file was never written
        while (into.hasRemaining()) {
            into.put((byte) 0);
        }
        into.flip();
    }

    private void writeInPlace(long index, ByteBuffer bytes) {
        long pos = GmaFormat.chunkOffset(index);
        try {
            while (bytes.hasRemaining()) {
                channel.write(bytes, pos + bytes.position());
            }
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, "chunk " + index, "write failed: " + e.getMessage(), e);
        }
    }

    private void force() {
        try {
            channel.force(false);
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "fsync failed: " + e.getMessage(), e);
        }
    }

    static boolean allZero(ByteBuffer b) {
        for (int i = 0; i < b.limit(); i += 8) {
            if (b.getLong(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Appends the chunk to the journal (not yet durable nor in place: see {@link #sync}). Caller holds its lock. */
    public void write(GmaChunk c) {
        if (!lock(c.index()).isHeldByCurrentThread()) {
            throw new IllegalStateException("chunk " + c.index() + " written without its lock");
        }
        ByteBuffer bytes = c.seal();
        synchronized (journal) {
            journal.append(c.index(), bytes);
            c.written();
            generations.written(c.index(), c.generation);
        }
        synchronized (cache) {
            if (c.index() >= chunkCount) {
                chunkCount = c.index() + 1;
            }
            cache.put(c.index(), c);
        }
    }

    /**
     * Makes every written chunk durable: forces the journal, writes the chunks in place, forces the
     * GMA file, records their generations and empties the journal. A failure leaves the journal
     * as it was, so a later sync (or the next open) completes it.
     */
    public void sync() {
        synchronized (journal) {
            // taken before the force: every chunk noted here is in the journal
            Map<Long, Integer> written = generations.takeUnrecorded();
            try {
                Map<Long, Long> pending = journal.pending();
                if (!pending.isEmpty()) {
                    journal.force();
                    ByteBuffer bytes = ByteBuffer.allocate(GmaFormat.CHUNK_BYTES);
                    boolean first = true;
                    for (Map.Entry<Long, Long> e : pending.entrySet()) {
                        journal.readChunkAt(e.getValue(), bytes);
                        writeInPlace(e.getKey(), bytes);
                        if (first) {
                            KillPoints.hit(KillPoints.GC_GMA_MID_SYNC);
                            first = false;
                        }
                    }
                }
                force();
            } catch (RuntimeException e) {
                written.forEach(generations::written);
                throw e;
            }
            generations.record(written);
            if (!journal.pending().isEmpty()) {
                journal.reset();
            }
        }
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
                        visitor.visit(layout.pbnAt(ci, s), c.rc(s), c.pins(s), flags, c.expiry(s));
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

    /** Closes the GMA file, the journal, then the generation table (all idempotent). */
    @Override
    public void close() {
        try {
            closeChannel(channel, STORE, file);
        } finally {
            try {
                journal.close();
            } finally {
                generations.close();
            }
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
