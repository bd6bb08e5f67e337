package org.holdfast.client.scan;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Arrays;
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
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;

/**
 * Reads a volume in large chunks and hashes every block, as a small pipeline: one dispatching
 * thread hands each free chunk of a fixed set of reused direct buffers ({@code slots} x
 * {@code chunkBytes}) to a pool of threads that read it (positional reads, in parallel) and hash
 * its blocks, and the consumer takes chunks strictly in LBN order with {@link #next()} and hands
 * each back with {@link #release}.
 * Memory is fixed; a slow consumer stalls the reader (it waits for a free slot).
 *
 * <p>Holes ({@link DataRegions}) are never read: their blocks come out as zero blocks with the
 * all-zero fingerprint, counted in {@link ScannedChunk#holeBlocks()}. Every other block is hashed,
 * zero-tested and given its possession tag on the pool thread that read it, so the single consumer
 * only compares and forwards.
 *
 * <p>With {@link ChangeHashing} each block read also gets its cheap {@link ChangeHash}; when the
 * previous state is given, the dispatching thread loads its entries for each chunk before the
 * chunk is hashed, and a block whose cheap hash equals the stored one keeps the stored SHA-256 and
 * zero flag instead of being zero-tested and SHA-256 hashed. An unknown stored hash never matches.
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

    private final Source source;
    private final long volumeBytes;
    private final int blockSize;
    private final ChangedBlockList extents;
    private final int maxBlocks;
    private final ArrayBlockingQueue<ScannedChunk> free;
    private final ArrayBlockingQueue<Object> ready;
    private final ExecutorService hashPool;
    private final DataRegions regions;
    private final byte[] possessionSecret;
    private final ChangeHashing changeHashing;
    private final long[] holeHash;
    private final ThreadLocal<BlockWork> work = ThreadLocal.withInitial(BlockWork::new);
    private final Thread reader;
    private volatile boolean stopped;

    /**
     * Reads the blocks of {@code extents} (all of the volume: {@link ChangedBlockList#all}) from
     * {@code source}, hashing with {@code hashThreads} threads; no holes, no possession tags.
     */
    public BlockReader(FileChannel source, long volumeBytes, int blockSize, ChangedBlockList extents, int chunkBytes,
                       int slots, int hashThreads) {
        this(source, volumeBytes, blockSize, extents, chunkBytes, slots, hashThreads, DataRegions.wholeFile(volumeBytes), null);
    }

    /**
     * Like the constructor above, skipping the holes that {@code regions} reports (the caller owns
     * and closes {@code regions}), and tagging every non-zero block for the session whose possession
     * secret is {@code possessionSecret} (null: no tags).
     */
    public BlockReader(FileChannel source, long volumeBytes, int blockSize, ChangedBlockList extents, int chunkBytes,
                       int slots, int hashThreads, DataRegions regions, byte[] possessionSecret) {
        this((Source) source::read, volumeBytes, blockSize, extents, chunkBytes, slots, hashThreads, regions, possessionSecret);
    }

    /** Like the constructor above, reading from any positional {@code source} (a qcow2 image over NBD). */
    public BlockReader(Source source, long volumeBytes, int blockSize, ChangedBlockList extents, int chunkBytes,
                       int slots, int hashThreads, DataRegions regions, byte[] possessionSecret) {
        this(source, volumeBytes, blockSize, extents, chunkBytes, slots, hashThreads, regions, possessionSecret, null);
    }

    /**
     * Like the constructor above, also computing cheap change hashes as {@code changeHashing} says
     * (null: none). Keeping stored SHA-256 values is for incremental backups only, which carry no
     * possession secret (their tags are computed for the changed blocks alone).
     */
    public BlockReader(Source source, long volumeBytes, int blockSize, ChangedBlockList extents, int chunkBytes,
                       int slots, int hashThreads, DataRegions regions, byte[] possessionSecret, ChangeHashing changeHashing) {
        if (changeHashing != null && changeHashing.previous() != null && possessionSecret != null) {
            throw new IllegalArgumentException("stored fingerprints are kept only without possession tags (incremental)");
        }
        this.changeHashing = changeHashing;
        this.holeHash = new long[2];
        if (changeHashing != null) {
            changeHashing.hash().hash(new byte[blockSize], 0, blockSize, new long[2], holeHash, 0);
        }
        this.source = source;
        this.regions = regions;
        this.possessionSecret = possessionSecret == null ? null : possessionSecret.clone();
        this.volumeBytes = volumeBytes;
        this.blockSize = blockSize;
        this.extents = extents;
        int chunk = Math.max(blockSize, chunkBytes / blockSize * blockSize);
        this.maxBlocks = chunk / blockSize;
        this.free = new ArrayBlockingQueue<>(slots);
        this.ready = new ArrayBlockingQueue<>(slots + 1);
        for (int i = 0; i < slots; i++) {
            free.add(new ScannedChunk(chunk, blockSize, changeHashing != null,
                    changeHashing != null && changeHashing.previous() != null));
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
                    if (c.previousFingerprints != null) {
                        // one thread reads the previous state, in order; the pool threads only compare
                        changeHashing.previous().read(first, n, c.previousFingerprints, 0, c.previousHashes, 0);
                    }
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

    /**
     * Fills chunk {@code c} with blocks {@code lbn..lbn+n-1}: blocks wholly inside a hole become zero
     * blocks without a read, the others are read (one positional read per stretch of data) and hashed,
     * zero-checked and tagged here, on the pool thread. Runs on a pool thread.
     */
    private void readAndHash(ScannedChunk c, long lbn, int n) {
        c.firstLbn = lbn;
        c.blocks = n;
        c.sourceBytesRead = 0;
        c.holeBlocks = 0;
        c.sha256Blocks = 0;
        long chunkStart = lbn * blockSize;
        long chunkEnd = chunkStart + (long) n * blockSize;
        BlockWork w = work.get();
        try {
            for (int i = 0; i < n; ) {
                long data = regions.nextData(chunkStart + (long) i * blockSize);
                // a block holds data if any byte of it may: round data outwards to whole blocks
                int from = data == DataRegions.NO_MORE_DATA || data >= chunkEnd ? n
                        : Math.max(i, (int) ((data - chunkStart) / blockSize));
                markHoles(c, i, from);
                if (from == n) {
                    break;
                }
                long hole = Math.min(chunkEnd, Math.max(regions.nextHole(data), data + 1));
                int to = (int) Math.min(n, (hole - chunkStart + blockSize - 1) / blockSize);
                read(c, chunkStart, from, to);
                for (int b = from; b < to; b++) {
                    w.block(c, b);
                }
                i = to;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void markHoles(ScannedChunk c, int from, int to) {
        for (int b = from; b < to; b++) {
            c.zero[b] = true;
            Arrays.fill(c.fingerprints, b * Fingerprint.BYTES, (b + 1) * Fingerprint.BYTES, (byte) 0);
            c.tags[b] = 0;
            if (c.changeHashes != null) {
                c.changeHashes[2 * b] = holeHash[0];
                c.changeHashes[2 * b + 1] = holeHash[1];
            }
        }
        c.holeBlocks += to - from;
    }

    /** Reads blocks {@code from..to-1} of the chunk into its buffer; past the volume's end they read as zeros. */
    private void read(ScannedChunk c, long chunkStart, int from, int to) throws IOException {
        long pos = chunkStart + (long) from * blockSize;
        int want = (to - from) * blockSize;
        int inVolume = (int) Math.max(0, Math.min(want, volumeBytes - pos));
        ByteBuffer d = c.data; // this thread owns the chunk until the consumer takes it
        int base = from * blockSize;
        d.limit(base + inVolume).position(base);
        while (d.hasRemaining()) {
            int r = source.read(d, pos + d.position() - base);
            if (r < 0) {
                throw new IOException("source ended at byte " + (pos + d.position() - base) + ", expected " + volumeBytes
                        + " bytes: did it shrink while being read?");
            }
        }
        c.sourceBytesRead += inVolume;
        d.limit(base + want);
        while (d.hasRemaining()) {
            d.put((byte) 0);
        }
    }

    /**
     * One pool thread's reusable state: the hasher, a heap copy of the block being worked on (SHA-256,
     * the zero test and XXH3 all run fastest on a heap array, and the copy from the direct buffer stays
     * in the L1 cache), and the session's possession prover. Allocates nothing per block.
     */
    private final class BlockWork {
        final BlockHasher hasher = new BlockHasher();
        final byte[] block = new byte[blockSize];
        final PossessionProof proof = possessionSecret == null ? null : new PossessionProof(possessionSecret);
        final long[] hashScratch = new long[2];

        void block(ScannedChunk c, int b) {
            c.data.get(b * blockSize, block, 0, blockSize);
            int fp = b * Fingerprint.BYTES;
            if (c.changeHashes != null) {
                changeHashing.hash().hash(block, 0, blockSize, hashScratch, c.changeHashes, 2 * b);
                if (c.previousHashes != null && ChangeHash.sameKnown(c.changeHashes, c.previousHashes, b)) {
                    // same cheap hash: the block is taken as unchanged and keeps its stored SHA-256
                    System.arraycopy(c.previousFingerprints, fp, c.fingerprints, fp, Fingerprint.BYTES);
                    c.zero[b] = Arrays.equals(c.fingerprints, fp, fp + Fingerprint.BYTES, ZERO_FINGERPRINT, 0, Fingerprint.BYTES);
                    c.tags[b] = 0;
                    return;
                }
            }
            boolean zero = hasher.fingerprint(block, 0, blockSize, c.fingerprints, fp);
            if (!zero) {
                c.sha256Blocks++;
            }
            c.zero[b] = zero;
            c.tags[b] = zero || proof == null ? 0 : proof.tag(block, 0, blockSize);
        }
    }

    private static final byte[] ZERO_FINGERPRINT = new byte[Fingerprint.BYTES];

    /**
     * Cheap change hashes for a scan: the {@code hash} to compute for every block, and the
     * {@code previous} state's entries (a cursor of its own) whose SHA-256 a block keeps when its
     * cheap hash is unchanged; null {@code previous}: every block read gets its SHA-256 (a full
     * re-hash, or a full backup).
     */
    public record ChangeHashing(ChangeHash hash, StateFile.PreviousState.Cursor previous) {
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

    /** Positional reads, as {@link FileChannel#read(ByteBuffer, long)}; called from several threads at once. */
    @FunctionalInterface
    public interface Source {
        int read(ByteBuffer dst, long position) throws IOException;
    }

    private record Pending(ScannedChunk chunk, CompletableFuture<Void> hashed) {
    }
}
