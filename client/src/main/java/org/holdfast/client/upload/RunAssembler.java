package org.holdfast.client.upload;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Queue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.scan.ChangeSink;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * Groups changed blocks into ENTRIES runs of consecutive LBNs and sends them. A run ends at a gap
 * in the LBNs, at {@link ProtocolLimits#MAX_RUN_ENTRIES}, or when the slab holding its payloads
 * is full; payloads of non-zero blocks are copied into the current slab of the
 * {@link PayloadWindow} (shared by consecutive runs), where they wait for NEED. Runs are
 * queued in send order, which is the order NEEDs answer them. Runs themselves are limited too
 * ({@code maxRunsInFlight}) so that a volume of zeros cannot queue unbounded ENTRIES. ENTRIES are
 * written unflushed and flushed every {@link #FLUSH_RUNS} runs, at the end of each scanned chunk, and
 * before anything that may wait for the server. Called by the scanning thread only.
 *
 * <p>Each non-zero entry carries its possession tag ({@link PossessionProof}, keyed by the session's
 * secret from BACKUP_READY): the server counts a block it already has as a duplicate only with a
 * matching tag. In a full backup every non-zero block is sent, so the reading threads compute the
 * tags in parallel and hand them in; in an incremental most blocks are unchanged, so this thread
 * computes tags only for the changed ones, from their copy in the slab ({@code proof} non-null).
 */
final class RunAssembler implements ChangeSink {
    /** ENTRIES written before a flush: scattered changes then cost one system call per this many runs. */
    static final int FLUSH_RUNS = 64;
    private final ServerConnection conn;
    private final PayloadWindow window;
    private final Queue<PendingRun> pending;
    private final Semaphore runsInFlight;
    private final SessionFailure failure;
    private final int blockSize;
    private final byte[] fps = new byte[ProtocolLimits.MAX_RUN_ENTRIES * Fingerprint.BYTES];
    private final PossessionProof proof;
    private final int[] offsets = new int[ProtocolLimits.MAX_RUN_ENTRIES];
    private final long[] tags = new long[ProtocolLimits.MAX_RUN_ENTRIES];
    private long start;
    private int count;
    private PayloadWindow.Slab slab; // the slab being filled; the assembler holds a reference
    private boolean runUsesSlab;
    private int unflushed; // ENTRIES written but not yet flushed
    private long runsSent;
    private long entriesSent;

    RunAssembler(ServerConnection conn, PayloadWindow window, Queue<PendingRun> pending, Semaphore runsInFlight,
                 SessionFailure failure, int blockSize, PossessionProof proof) {
        this.conn = conn;
        this.window = window;
        this.pending = pending;
        this.runsInFlight = runsInFlight;
        this.failure = failure;
        this.blockSize = blockSize;
        this.proof = proof;
    }

    @Override
    public void changed(long lbn, byte[] fingerprints, int fpOff, ByteBuffer data, int dataOff, boolean zero, long tag) {
        boolean slabFull = !zero && slab != null && slab.used + blockSize > slab.data.length;
        // A run keeps all its payloads in one slab, so a full slab ends the run if it has payloads there.
        if (count > 0 && (lbn != start + count || count == ProtocolLimits.MAX_RUN_ENTRIES || (slabFull && runUsesSlab))) {
            flush();
        }
        if (count == 0) {
            start = lbn;
        }
        System.arraycopy(fingerprints, fpOff, fps, count * Fingerprint.BYTES, Fingerprint.BYTES);
        if (zero) {
            offsets[count] = -1;
            tags[count] = 0;
        } else {
            if (slab == null || slab.used + blockSize > slab.data.length) {
                window.release(slab);
                flushWrites(); // acquire may wait for NEEDs, which need these ENTRIES to reach the server
                slab = window.acquire(failure);
            }
            data.get(dataOff, slab.data, slab.used, blockSize);
            offsets[count] = slab.used;
            tags[count] = proof != null ? proof.tag(slab.data, slab.used, blockSize) : tag;
            slab.used += blockSize;
            runUsesSlab = true;
        }
        count++;
    }

    /** Sends the run being assembled, if any. */
    void flush() {
        if (count == 0) {
            return;
        }
        failure.check();
        acquireRunSlot();
        byte[] runFps = Arrays.copyOf(fps, count * Fingerprint.BYTES);
        PayloadWindow.Slab runSlab = runUsesSlab ? slab : null;
        if (runSlab != null) {
            window.retain(runSlab);
        }
        PendingRun run = new PendingRun(start, count, Arrays.copyOf(offsets, count), runSlab);
        pending.add(run); // before sending: the NEED may come back at once
        conn.write(new Entries(start, count, runFps, Arrays.copyOf(tags, count)));
        if (++unflushed >= FLUSH_RUNS) {
            flushWrites();
        }
        runsSent++;
        entriesSent += count;
        count = 0;
        runUsesSlab = false;
    }

    /** Flushes the runs of a scanned chunk, so that no ENTRIES waits longer than one chunk's scan. */
    @Override
    public void chunkDone() {
        flushWrites();
    }

    private void flushWrites() {
        if (unflushed > 0) {
            unflushed = 0;
            conn.flush();
        }
    }

    /** Sends the last run and gives up the slab being filled. */
    void finish() {
        flush();
        flushWrites();
        window.release(slab);
        slab = null;
    }

    private void acquireRunSlot() {
        if (runsInFlight.tryAcquire()) {
            return;
        }
        flushWrites(); // the slots come back with NEEDs, which need these ENTRIES to reach the server
        try {
            while (!runsInFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                failure.check();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentException(ExitCode.INTERNAL, "interrupted", null, e);
        }
    }

    /** Gives up the slab being filled and any unsent run (after a failure). */
    void discard() {
        window.release(slab);
        slab = null;
        count = 0;
        runUsesSlab = false;
    }

    long runsSent() {
        return runsSent;
    }

    long entriesSent() {
        return entriesSent;
    }
}
