package org.holdfast.client.upload;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.holdfast.client.net.BlocksBuffers;
import org.holdfast.client.net.FrameBuffers;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * Answers the server's NEEDs: takes the matching run (NEEDs come in run order), collects the
 * asked-for payloads into batches of up to {@link #GROUP_BLOCKS} (across consecutive NEEDs while
 * more NEEDs are already waiting), compresses each batch on a pool of threads and sends it as one
 * BLOCKS frame.
 * Also the only reader of the connection during the upload, so it receives COMMITTED too.
 *
 * <p>With a server of protocol 4, consecutive asked-for blocks of one run travel as compressed
 * frames of up to {@code frameSize} raw bytes: one zstd frame per group, sent as a
 * {@link PayloadCodec#ZSTD_FRAME} block followed by {@link PayloadCodec#FRAME_MEMBER} blocks. A
 * frame that zstd does not shrink by 1/32 is sent as raw blocks instead (one block alone would
 * shrink even less). With an older server every block travels alone, zstd or raw, as before.
 *
 * <p>Each compressing thread owns one {@link BlockCodec}, one output array and (for frames whose
 * blocks are not adjacent in the payload window) one gather array, so a block costs no allocation
 * besides its bytes in the message's pooled buffer.
 */
final class BlockUploader implements AutoCloseable {
    /** Most blocks per BLOCKS frame (a batch): a big NEED is split into batches compressed in parallel. */
    static final int GROUP_BLOCKS = 256;
    /** Longest silence while runs are waiting for NEED before the server counts as stuck. */
    static final Duration NEED_TIMEOUT = Duration.ofMinutes(3);

    private final ServerConnection conn;
    private final PayloadWindow window;
    private final Queue<PendingRun> pending;
    private final Semaphore runsInFlight;
    private final SessionFailure failure;
    private final int blockSize;
    private final ExecutorService compressPool;
    private final ThreadLocal<BlockCodec> codecs;
    private final ThreadLocal<byte[]> outputs;
    private final ThreadLocal<byte[]> gathers;
    // most blocks per compressed frame; below 2 (a server before protocol 4, or huge blocks) no frames are made
    private final int frameBlocks;
    private final Thread thread;
    private final CompletableFuture<Committed> committed = new CompletableFuture<>();
    final LongAdder sentBlocks = new LongAdder();
    final LongAdder sentBytes = new LongAdder();
    final LongAdder zstdBlocks = new LongAdder();
    final LongAdder framedBlocks = new LongAdder();
    private final int perFrame;
    private final BlocksBuffers frames;
    private Batch batch; // receiving thread: blocks asked for and not yet handed to a compressing thread
    private volatile boolean stopped;

    BlockUploader(ServerConnection conn, PayloadWindow window, Queue<PendingRun> pending, Semaphore runsInFlight,
                  SessionFailure failure, int blockSize, int threads, int level, int frameSize) {
        this.conn = conn;
        this.window = window;
        this.pending = pending;
        this.runsInFlight = runsInFlight;
        this.failure = failure;
        this.blockSize = blockSize;
        this.codecs = ThreadLocal.withInitial(() -> new BlockCodec(level));
        this.frameBlocks = conn.protocolVersion() >= PayloadCodec.FRAMES_SINCE_VERSION
                ? Math.min(GROUP_BLOCKS, Math.min(frameSize, ProtocolLimits.FRAME_MAX_RAW) / blockSize) : 1;
        int widest = frameBlocks >= 2 ? frameBlocks * blockSize : blockSize;
        this.outputs = ThreadLocal.withInitial(() -> new byte[BlockCodec.maxCompressedLength(widest)]);
        this.gathers = ThreadLocal.withInitial(() -> new byte[widest]);
        this.compressPool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(() -> {
                try {
                    r.run();
                } finally {
                    // each pool thread closes the native zstd contexts it created
                    BlockCodec c = codecs.get();
                    c.close();
                }
            }, "holdfast-compress");
            t.setDaemon(true);
            return t;
        });
        this.perFrame = Math.min(GROUP_BLOCKS, Math.max(1, ProtocolLimits.TARGET_FRAME_PAYLOAD
                / (ProtocolLimits.maxZstdPayload(blockSize) + Blocks.BLOCK_HEADER_BYTES)));
        // a full batch compressed to half its size (zstd level 1 on file system data); buffers grow past it when needed
        int frameCapacity = Blocks.FRAME_PREFIX_BYTES + perFrame * (Blocks.BLOCK_HEADER_BYTES + blockSize / 2);
        // frames of at least half a batch are built in reused buffers: each holds that many blocks of the window
        long bigInFlight = 2 * window.bytes() / ((long) perFrame * blockSize);
        this.frames = new BlocksBuffers(frameCapacity, (int) Math.min(1024, bigInFlight + threads + 2));
        this.thread = new Thread(this::receiveLoop, "holdfast-upload");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Completes with the server's COMMITTED. */
    CompletableFuture<Committed> committed() {
        return committed;
    }

    private void receiveLoop() {
        NeedDeadline deadline = new NeedDeadline(NEED_TIMEOUT, System::nanoTime);
        try {
            while (!stopped && !failure.failed()) {
                Message m = conn.poll(batch != null ? Duration.ZERO : Duration.ofMillis(200));
                if (m == null && batch != null) {
                    dispatch(); // no further NEED waiting: send what the last ones asked for
                    continue;
                }
                if (m == null) {
                    if (deadline.expired(!pending.isEmpty())) {
                        throw new org.holdfast.client.AgentException(org.holdfast.client.ExitCode.NETWORK,
                                "the server sent no NEED for " + NEED_TIMEOUT.toMinutes() + " minutes",
                                "check the server's health and log, then retry");
                    }
                    continue;
                }
                deadline.heard();
                if (m instanceof Need n) {
                    handle(n);
                } else if (m instanceof Committed c) {
                    committed.complete(c);
                    return;
                } else {
                    FrameBuffers.release(m);
                    throw conn.protocolViolation("unexpected " + m.type() + " during a backup");
                }
            }
        } catch (Throwable t) {
            failure.fail(t);
            committed.completeExceptionally(t);
        }
    }

    private void handle(Need n) {
        PendingRun run = pending.poll();
        if (run == null || run.startLbn != n.startLbn() || run.count != n.count()) {
            throw conn.protocolViolation("NEED for " + n.startLbn() + "+" + n.count() + " does not answer the oldest run"
                    + (run == null ? " (none is waiting)" : " (" + run.startLbn + "+" + run.count + ")"));
        }
        runsInFlight.release();
        int needed = n.neededCount();
        if (needed == 0) {
            window.release(run.slab);
            return;
        }
        run.groupsLeft.set(1); // this method's own reference, so no finished batch frees the slab while blocks are still added
        for (int i = 0; i < run.count; i++) {
            if (n.isNeeded(i)) {
                if (run.payloadOffsets[i] < 0) {
                    groupDone(run);
                    throw conn.protocolViolation("NEED asks for the payload of zero block " + (run.startLbn + i));
                }
                if (batch == null) {
                    batch = new Batch(perFrame);
                }
                batch.add(run, i);
                if (batch.full()) {
                    dispatch();
                }
            }
        }
        groupDone(run);
    }

    /** Hands the open batch to the compressing threads. Receiving thread only. */
    private void dispatch() {
        Batch b = batch;
        batch = null;
        compressPool.execute(() -> sendGroup(b));
    }

    private void sendGroup(Batch g) {
        try {
            if (failure.failed()) {
                return;
            }
            BlockCodec codec = codecs.get();
            byte[] out = outputs.get();
            Blocks.Builder b = g.size * 2 >= perFrame ? frames.builder() : frames.oneOff(g.size * blockSize / 2);
            Blocks blocks;
            long bytes = 0;
            try {
                for (int k = 0; k < g.size; ) {
                    int m = frameBlocks >= 2 ? frameLength(g, k) : 1;
                    bytes += m >= 2 ? addFrame(b, g, k, m, codec, out) : addBlock(b, g.blockRun[k], g.blockIdx[k], codec, out);
                    k += m;
                }
                blocks = b.build();
            } finally {
                b.close();
            }
            sentBlocks.add(g.size);
            sentBytes.add(bytes);
            frames.send(conn, blocks, cause -> {
                if (cause != null) {
                    org.holdfast.client.AgentException why = conn.refusal(); // the server said why it closed
                    failure.fail(why != null ? why : new org.holdfast.client.AgentException(org.holdfast.client.ExitCode.NETWORK,
                            "sending blocks failed: " + (cause.getMessage() == null ? "the connection is closed" : cause.getMessage()),
                            "check the network and the server, then retry", cause));
                }
                g.done();
            });
        } catch (Throwable t) {
            failure.fail(t);
            g.done();
        }
    }

    /** Blocks from {@code k} on that share one compressed frame: consecutive blocks of the batch from the same run, at most {@link #frameBlocks}. */
    private int frameLength(Batch g, int k) {
        int e = k + 1;
        while (e < g.size && e - k < frameBlocks && g.blockRun[e] == g.blockRun[k]) {
            e++;
        }
        return e - k;
    }

    /** Adds one block alone, zstd when it pays, else raw; returns its payload bytes. */
    private int addBlock(Blocks.Builder b, PendingRun run, int i, BlockCodec codec, byte[] out) {
        int off = run.payloadOffsets[i];
        int n = codec.compress(run.slab.data, off, blockSize, out, 0);
        if (n > 0) {
            b.add(run.startLbn + i, PayloadCodec.ZSTD, out, 0, n);
            zstdBlocks.increment();
            return n;
        }
        b.add(run.startLbn + i, PayloadCodec.RAW, run.slab.data, off, blockSize);
        return blockSize;
    }

    /**
     * Compresses blocks {@code [k, k + m)} of the batch (one run) as one zstd frame and adds it, or
     * adds them as raw blocks if the frame does not pay; returns the payload bytes added. Blocks
     * adjacent in the slab are compressed in place, others are gathered first.
     */
    private int addFrame(Blocks.Builder b, Batch g, int k, int m, BlockCodec codec, byte[] out) {
        PendingRun run = g.blockRun[k];
        byte[] slab = run.slab.data;
        int first = run.payloadOffsets[g.blockIdx[k]];
        boolean adjacent = true;
        for (int j = 1; j < m && adjacent; j++) {
            adjacent = run.payloadOffsets[g.blockIdx[k + j]] == first + j * blockSize;
        }
        byte[] src = slab;
        int srcOff = first;
        if (!adjacent) {
            src = gathers.get();
            srcOff = 0;
            for (int j = 0; j < m; j++) {
                System.arraycopy(slab, run.payloadOffsets[g.blockIdx[k + j]], src, j * blockSize, blockSize);
            }
        }
        int n = codec.compress(src, srcOff, m * blockSize, out, 0);
        if (n <= 0) {
            for (int j = 0; j < m; j++) {
                int i = g.blockIdx[k + j];
                b.add(run.startLbn + i, PayloadCodec.RAW, slab, run.payloadOffsets[i], blockSize);
            }
            return m * blockSize;
        }
        b.addFrame(run.startLbn + g.blockIdx[k], out, 0, n);
        for (int j = 1; j < m; j++) {
            b.addFrameMember(run.startLbn + g.blockIdx[k + j]);
        }
        framedBlocks.add(m);
        return n;
    }

    /**
     * The asked-for blocks of one BLOCKS frame, possibly from several consecutive runs: small NEEDs
     * (scattered changes) share a frame instead of costing one frame, one task and one write each.
     * Holds one reference on each run it has blocks of.
     */
    private final class Batch {
        final PendingRun[] blockRun;
        final int[] blockIdx;
        final java.util.List<PendingRun> runs = new java.util.ArrayList<>(4);
        int size;

        Batch(int capacity) {
            blockRun = new PendingRun[capacity];
            blockIdx = new int[capacity];
        }

        void add(PendingRun run, int i) {
            if (runs.isEmpty() || runs.get(runs.size() - 1) != run) {
                run.groupsLeft.incrementAndGet();
                runs.add(run);
            }
            blockRun[size] = run;
            blockIdx[size++] = i;
        }

        boolean full() {
            return size == blockRun.length;
        }

        void done() {
            runs.forEach(BlockUploader.this::groupDone);
        }
    }

    private void groupDone(PendingRun run) {
        if (run.groupsLeft.decrementAndGet() == 0) {
            window.release(run.slab);
        }
    }

    @Override
    public void close() {
        stopped = true;
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        compressPool.shutdown();
        try {
            compressPool.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        frames.close();
    }
}
