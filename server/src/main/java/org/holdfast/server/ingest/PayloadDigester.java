package org.holdfast.server.ingest;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * Decodes the payloads of BLOCKS frames and computes their SHA-256 (and possession fingerprint) on a pool of threads, before
 * the frame reaches its connection's serial lane. The lane then only compares each digest with the
 * fingerprint the agent announced and appends: decompression and hashing, the CPU-heavy half of
 * ingest, run on every core and overlap with the lane's storing of the previous frame.
 *
 * <p>Nothing here decides whether a payload is accepted: a frame's {@link FrameDigests} carries the
 * first payload that cannot be decoded as a {@link ProtocolException}, which the lane throws when it
 * reaches that block, exactly where it would have failed decoding the block itself.
 */
final class PayloadDigester implements AutoCloseable {
    /** Blocks per task: enough to amortise the hand-off, few enough to spread a frame over the cores. */
    static final int BLOCKS_PER_TASK = 64;

    private final ExecutorService pool;
    private final List<Worker> workers = new ArrayList<>();
    private final ThreadLocal<Worker> worker;

    PayloadDigester(int threads) {
        this.pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                new DefaultThreadFactory("holdfast-digest", true));
        this.worker = ThreadLocal.withInitial(() -> {
            Worker w = new Worker();
            synchronized (workers) {
                workers.add(w);
            }
            return w;
        });
    }

    /** The digests of a frame's payloads, and the first payload that could not be decoded (if any). */
    static final class FrameDigests {
        final byte[] digests;
        /** The possession fingerprint of each payload, 16 bytes at {@code i * 16}. */
        final byte[] pfs;
        private volatile int errorIndex = Integer.MAX_VALUE;
        private ProtocolException error;

        FrameDigests(int count) {
            this.digests = new byte[count * Fingerprint.BYTES];
            this.pfs = new byte[count * PossessionProof.PF_BYTES];
        }

        /** The decoding error of block {@code i}, or null if its digest is valid. */
        ProtocolException errorAt(int i) {
            return i == errorIndex ? error : null;
        }

        synchronized void fail(int i, ProtocolException e) {
            if (i < errorIndex) {
                error = e;
                errorIndex = i;
            }
        }
    }

    /**
     * Starts decoding and hashing every payload of {@code b} (which the caller keeps retained until
     * it completes). Tasks are cut at block boundaries that split no compressed frame: a frame is
     * decoded once, by one thread.
     */
    CompletableFuture<FrameDigests> digest(Blocks b, int blockSize) {
        FrameDigests d = new FrameDigests(b.count());
        if (b.count() <= BLOCKS_PER_TASK) {
            return CompletableFuture.supplyAsync(() -> {
                worker.get().digest(b, blockSize, 0, b.count(), d);
                return d;
            }, pool);
        }
        List<CompletableFuture<?>> parts = new ArrayList<>(b.count() / BLOCKS_PER_TASK + 1);
        for (int from = 0; from < b.count(); ) {
            int to = Math.min(b.count(), from + BLOCKS_PER_TASK);
            while (to < b.count() && b.codecs()[to] == PayloadCodec.FRAME_MEMBER) {
                to++;
            }
            int f = from;
            int t = to;
            parts.add(CompletableFuture.runAsync(() -> worker.get().digest(b, blockSize, f, t, d), pool));
            from = to;
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(v -> d);
    }

    /**
     * Decodes and hashes blocks {@code [from, to)} of {@code b} on the calling thread; {@code from}
     * and {@code to} split no compressed frame. A frame is decompressed once into {@code raw} (which
     * must hold its members, up to 1 MiB) and each member hashed from there; an undecodable frame
     * fails at its first block.
     */
    static void digestInline(Blocks b, int blockSize, int from, int to, FrameDigests d, BlockCodec codec,
                             BlockHasher hasher, byte[] payload, byte[] raw, long[] pfScratch) {
        for (int i = from; i < to; i++) {
            long lbn = b.lbns()[i];
            int c = b.codecs()[i];
            int len = b.lengths()[i];
            if (len > payload.length) {
                d.fail(i, new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "payload of LBN " + lbn + " is " + len + " bytes"));
                return;
            }
            if (c == PayloadCodec.ZSTD_FRAME) {
                int m = b.frameMembers(i);
                if ((long) m * blockSize > Math.min(raw.length, ProtocolLimits.FRAME_MAX_RAW)) {
                    d.fail(i, new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "zstd frame of LBN " + lbn + " holds " + m
                            + " blocks, over " + ProtocolLimits.FRAME_MAX_RAW + " raw bytes"));
                    return;
                }
                if (len >= m * blockSize) {
                    // a frame that does not shrink its blocks has no reason to be (the agent sends them raw), and the store takes frames under 1 MiB
                    d.fail(i, new ProtocolException(ErrorCode.BAD_FRAME, "zstd frame of LBN " + lbn + " is " + len + " bytes for "
                            + m + " blocks of " + blockSize + ": a frame must be smaller than its blocks; send them raw instead"));
                    return;
                }
                b.copyPayload(i, payload, 0);
                try {
                    codec.decompress(payload, 0, len, raw, 0, m * blockSize);
                } catch (CorruptPayloadException ex) {
                    d.fail(i, new ProtocolException(ErrorCode.BAD_FRAME, "zstd frame of LBN " + lbn + " (" + m + " blocks) does not"
                            + " decode to " + m + " blocks of " + blockSize + " bytes; nothing of it is stored: " + ex.getMessage()));
                    return;
                }
                for (int k = 0; k < m; k++) {
                    hasher.sha256(raw, k * blockSize, blockSize, d.digests, (i + k) * Fingerprint.BYTES);
                    PossessionProof.pf(raw, k * blockSize, blockSize, d.pfs, (i + k) * PossessionProof.PF_BYTES, pfScratch);
                }
                i += m - 1;
                continue;
            }
            byte[] block;
            if (c == PayloadCodec.RAW) {
                if (len != blockSize) {
                    d.fail(i, new ProtocolException(ErrorCode.BAD_FRAME, "raw payload of LBN " + lbn + " is " + len
                            + " bytes, the block size is " + blockSize));
                    return;
                }
                b.copyPayload(i, payload, 0);
                block = payload;
            } else if (c == PayloadCodec.ZSTD) {
                b.copyPayload(i, payload, 0);
                try {
                    codec.decompress(payload, 0, len, raw, 0, blockSize);
                } catch (CorruptPayloadException ex) {
                    d.fail(i, new ProtocolException(ErrorCode.BAD_FRAME, "zstd payload of LBN " + lbn + " does not decode to one "
                            + blockSize + "-byte block: " + ex.getMessage()));
                    return;
                }
                block = raw;
            } else {
                d.fail(i, new ProtocolException(ErrorCode.BAD_FRAME, "BLOCKS payload of LBN " + lbn + " has codec " + c));
                return;
            }
            hasher.sha256(block, 0, blockSize, d.digests, i * Fingerprint.BYTES);
            PossessionProof.pf(block, 0, blockSize, d.pfs, i * PossessionProof.PF_BYTES, pfScratch);
        }
    }

    @Override
    public void close() {
        pool.shutdown();
        try {
            if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
                pool.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (workers) {
            workers.forEach(w -> w.codec.close());
            workers.clear();
        }
    }

    /** One pool thread's codec, hasher and scratch. */
    private static final class Worker {
        final BlockCodec codec = new BlockCodec();
        final BlockHasher hasher = new BlockHasher();
        final byte[] payload = new byte[ProtocolLimits.MAX_PAYLOAD];
        final byte[] raw = new byte[ProtocolLimits.MAX_BLOCK_SIZE];
        final long[] pfScratch = new long[2];

        void digest(Blocks b, int blockSize, int from, int to, FrameDigests d) {
            digestInline(b, blockSize, from, to, d, codec, hasher, payload, raw, pfScratch);
        }
    }
}
