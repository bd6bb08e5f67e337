package org.holdfast.server.engine;

import java.util.concurrent.CompletableFuture;

/**
 * One worker of the master/worker dedup engine (thesis 7.2): its own Sungem engine (SFI, Bloom filter
 * chain, containers), driven by the master's {@link ClusterFingerprintIndex} through plain value
 * messages, so that a transport can carry them between processes.
 *
 * <p>Per master stream ({@code stream}, a number the master picks) the worker keeps the state a
 * standalone session keeps (its default container and recent matches). Lookup and record return
 * futures: the master broadcasts to every worker before it waits for any. Calls for one stream come
 * in order from one thread; calls for different streams may run concurrently.
 */
public interface DedupWorker extends AutoCloseable {

    /** This worker's number, 0..n-1 in the master's list. */
    int id();

    /**
     * This worker's stable identity, never -1 ({@link DedupStream#NO_WORKER}): the cluster membership's
     * worker id for a worker in another process, which stays the same when other workers drop or
     * register; for a worker in this process (no membership), its number. Storing workers are named
     * by it ({@link DedupStream#storingWorkers}).
     */
    default long memberId() {
        return id();
    }

    /** Looks up the entries in this worker's SFI and containers, resolving hits and their neighbours (7.2.1). */
    CompletableFuture<SegmentAnswer> lookup(SegmentLookup request);

    /**
     * The first phase of a two-phase broadcast: whether this worker has candidate containers for the
     * lookup the probe's samples come from (SFI hits, or samples found in the stream's recent
     * containers). A worker answering 0 has noted the lookup as all-miss, so that a record of its
     * entries (routed misses) needs no lookup of its own.
     */
    CompletableFuture<ProbeAnswer> probe(SegmentProbe request);

    /** Learns the outcome for the entries it holds and stores the misses routed to it (7.2.2, 7.2.3). */
    CompletableFuture<Void> record(SegmentRecord request);

    /** Forgets freed PBNs (their fingerprints packed in {@code fps}) that it may hold: no lookup returns them again. */
    void forget(long[] pbns, byte[] fps, int count);

    /**
     * Forgets those of the freed PBNs whose fingerprint this worker's engine may hold by what it keeps in
     * memory, and returns how many it skipped; only for PBNs of another worker's range, which this
     * worker's engine never records by construction (data on workers). By default every one is forgotten.
     */
    default int forgetIfHeld(long[] pbns, byte[] fps, int count) {
        forget(pbns, fps, count);
        return 0;
    }

    /** Drops the per-stream state of {@code stream}. */
    void closeStream(long stream);

    /** Makes the worker's engine state durable. */
    void flush();

    /** The worker's current load and counters. */
    DedupLoad load();

    @Override
    void close();
}
