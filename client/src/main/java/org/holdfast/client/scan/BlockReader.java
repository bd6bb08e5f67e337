package org.holdfast.client.scan;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.common.hash.BlockHasher;

/**
 * Reads a volume in large chunks and hashes every block, as a small pipeline: one dispatching
 * thread hands each free chunk of a fixed set of reused direct buffers ({@code slots} x
 * {@code chunkBytes}) to a pool of threads that read it (positional reads, in parallel) and hash
 * its blocks, and the consumer takes chunks strictly in LBN order with {@link #next()} and hands
 * each back with {@link #release}.
 * Memory is fixed; a slow consumer stalls the reader (it waits for a free slot).
 *
 * <p>Why this shape: SHA-256 at ~1.5 GB/s per core and the kernel's copy out of the page cache
 * (measured 0.4 to 1.5 CPU-seconds per GiB on the loaded test machine) are the CPU cost, so both
 * run on every core; chunks of 8 MiB keep the reads large and nearly sequential. All-zero blocks
 * are detected instead of hashed and get the all-zero fingerprint. The tail of the last block of a
 * volume whose size is not a multiple of the block size reads as zeros.
 */
public final class BlockReader implements AutoCloseable {
    /** Bytes read per chunk: large enough for sequential throughput, small enough to pipeline. */
    public static final int DEFAULT_CHUNK_BYTES = 8 << 20;
    /** Chunks in flight: one being read, some being hashed, one being consumed. */
    public static final int DEFAULT_SLOTS = 4;
    private static final Object END = new Object();

    private final FileChannel source;
    private final long volumeBytes;
    private final int blockSize;
    private final ChangedBlockList extents;
    private final int maxBlocks;
    private final ArrayBlockingQueue<ScannedChunk> free;
    private final ArrayBlockingQueue<Object> ready;
    private final ExecutorService hashPool;
    private final Thread reader;
    private volatile boolean stopped;

    /**
     * Reads the blocks of {@code extents} (all of the volume: {@link ChangedBlockList#all}) from
     * {@code source}, hashing with {@code hashThreads} threads.
     */
    public BlockReader(FileChannel source, long volumeBytes, int blockSize, ChangedBlockList extents, int chunkBytes,
                       int slots, int hashThreads) {
        this.source = source;
        this.volumeBytes = volumeBytes;
        this.blockSize = blockSize;
        this.extents = extents;
        int chunk = Math.max(blockSize, chunkBytes / blockSize * blockSize);
        this.maxBlocks = chunk / blockSize;
        this.free = new ArrayBlockingQueue<>(slots);
        this.ready = new ArrayBlockingQueue<>(slots + 1);
        for (int i = 0; i < slots; i++) {
            free.add(new ScannedChunk(chunk, blockSize));
        }
        this.hashPool = Executors.newFixedThreadPool(hashThreads, r -> {
            Thread t = new Thread(r, "holdfast-hash");
            t.setDaemon(true);
            return t;
        });
        this.reader = new Thread(this::readAll, "holdfast-read");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    private void readAll() {
        try {
            for (int e = 0; e < extents.extents() && !stopped; e++) {
                for (long lbn = extents.start(e); lbn < extents.end(e) && !stopped; ) {
                    int n = (int) Math.min(maxBlocks, extents.end(e) - lbn);
                    ScannedChunk c = free.take();
                    long first = lbn;
                    // read and hash on a pool thread: with several chunks in flight both the kernel's
                    // copy and SHA-256 run on every core, and the consumer still takes chunks in order
                    ready.put(new Pending(c, CompletableFuture.runAsync(() -> readAndHash(c, first, n), hashPool)));
                    lbn += n;
                }
            }
            ready.put(END);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            ready.offer(e);
        }
    }

    private void read(ScannedChunk c, long lbn, int n) throws IOException {
        c.firstLbn = lbn;
        c.blocks = n;
        long pos = lbn * blockSize;
        int want = n * blockSize;
        int inVolume = (int) Math.min(want, volumeBytes - pos);
        ByteBuffer d = c.data;
        d.clear().limit(inVolume);
        while (d.hasRemaining()) {
            int r = source.read(d, pos + d.position());
            if (r < 0) {
                throw new IOException("source ended at byte " + (pos + d.position()) + ", expected " + volumeBytes
                        + " bytes: did it shrink while being read?");
            }
        }
        d.limit(want);
        while (d.hasRemaining()) {
            d.put((byte) 0);
        }
    }

    private void readAndHash(ScannedChunk c, long lbn, int n) {
        try {
            read(c, lbn, n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BlockHasher h = BlockHasher.forCurrentThread();
        for (int i = 0; i < c.blocks; i++) {
            c.zero[i] = h.fingerprint(c.data, i * blockSize, blockSize, c.fingerprints, i * 32);
        }
    }

    /** The next chunk in LBN order, hashed; null after the last. The caller must {@link #release} it. */
    public ScannedChunk next() throws InterruptedException {
        Object o = ready.take();
        if (o == END) {
            ready.put(END);
            return null;
        }
        if (o instanceof Throwable t) {
            ready.put(t);
            if (t instanceof AgentException a) {
                throw a;
            }
            throw new AgentException(ExitCode.LOCAL_IO, "cannot read the source: " + (t instanceof java.io.IOException io
                    ? IoReasons.reason(io) : t.getMessage()), "check the source device or file", t);
        }
        Pending p = (Pending) o;
        try {
            p.hashed.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof UncheckedIOException io) {
                throw new AgentException(ExitCode.LOCAL_IO, "cannot read the source: " + IoReasons.reason(io.getCause()),
                        IoReasons.advice(io.getCause(), "the source", "check the source device or file"), io.getCause());
            }
            throw new AgentException(ExitCode.INTERNAL, "hashing failed: " + e.getCause(), null, e.getCause());
        }
        return p.chunk;
    }

    /** Gives a chunk back for reuse. */
    public void release(ScannedChunk c) {
        free.add(c);
    }

    /** Stops the reader and the hashing threads. Idempotent. */
    @Override
    public void close() {
        stopped = true;
        reader.interrupt();
        hashPool.shutdownNow();
        try {
            reader.join(5000);
            hashPool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Pending(ScannedChunk chunk, CompletableFuture<Void> hashed) {
    }
}
