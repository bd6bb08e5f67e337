package org.holdfast.server.engine;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The master side of distributed deduplication (thesis 7.2): a {@link FingerprintIndex} whose
 * fingerprints live on N {@link DedupWorker}s, each a Sungem engine with its own SFI, Bloom filter
 * chain and containers.
 *
 * <p>Why this shape: the standalone engine is bound by container loads and stores, so the cluster
 * must add no container I/O, only spread it (7.2). In {@link ClusterMode#NEAREST} mode the master
 * forms input segments as the standalone engine does and broadcasts them (with
 * {@link ClusterBroadcast#TWO_PHASE}, only to the workers a probe of their sampled fingerprints names
 * as candidates); each worker resolves hits
 * and their neighbours in its containers; the master keeps, entry by entry, the longest run any
 * worker found ({@link ClusterDedupStream}), and sends the remaining misses of a segment to the
 * worker holding the nearest resolved fingerprint, else to the stream's home worker, the least
 * loaded one when chosen; that worker stores them beside the match, as the standalone engine
 * would, and learns them in its SFI. So a repeated segment comes back to the worker whose
 * containers hold it, and each worker's SFI covers only what it stores: N workers have N times the
 * SFI memory for the same data. The alternative, {@link ClusterMode#HASH} (7.2.5,
 * {@link HashSplitDedupStream}), splits each segment by fingerprint hash: no broadcast, but every
 * worker sees a 1/N sample of each segment, so locality and container loads suffer; it suits
 * workloads that are not disk-bound.
 *
 * <p>Contract: an answer is always a worker's exact match, so the index never invents a duplicate;
 * {@link #forget} reaches every worker that may hold the PBN (in nearest mode all of them: until
 * workers own PBN ranges, the master does not know which one holds it), so a forgotten PBN is never
 * returned. We own the workers and close them.
 */
public final class ClusterFingerprintIndex implements FingerprintIndex {
    /** The streams keep a worker number per entry in a byte. */
    public static final int MAX_WORKERS = Byte.MAX_VALUE;
    /** In a two-phase broadcast a worker that resolved part of one of a stream's last this many lookups gets the next whole. */
    static final int AFFINITY = 2;
    final List<DedupWorker> workers;
    /**
     * Per worker number its {@link DedupWorker#memberId()}, read once here: a stream names storing
     * workers by these stable ids (its numbering is this index's, fixed for its life; the ids are what
     * the data path finds a worker's range store by, whatever else registers or drops meanwhile).
     */
    final long[] memberIds;
    final ClusterMode mode;
    final ClusterBroadcast broadcast;
    final InputSegmenter segmenter;
    /** New fingerprints without an anchor a stream sends to one home worker before it picks the least loaded again. */
    final int homeBudget;
    /**
     * Stream numbers, unique in the process, not per index: the remote master builds a new index
     * when the set of workers up changes while backups on the old one go on over the same links, and
     * a worker keys a stream's state by its number (one ending would drop the other's mid-backup).
     */
    private static final AtomicLong NEXT_STREAM = new AtomicLong();
    /** The workers' stored entries as last reported (answers carry them). */
    private final AtomicLongArray knownLoad;
    private volatile boolean closed;

    final LongAdder lookups = new LongAdder();
    final LongAdder hits = new LongAdder();
    final LongAdder recorded = new LongAdder();
    final LongAdder forgotten = new LongAdder();
    final LongAdder busyNanos = new LongAdder();
    /** Entries taken from a worker's run that another worker's run had begun (the merge split a run). */
    final LongAdder splitRuns = new LongAdder();
    /** Misses stored beside the nearest resolved fingerprint of their segment. */
    final LongAdder routedNearest = new LongAdder();
    /** Misses of segments with nothing resolved, stored on the stream's home worker. */
    final LongAdder routedHome = new LongAdder();
    /** Entries sent to workers in lookup requests, summed over workers (a broadcast counts once per worker). */
    final LongAdder lookupEntriesSent = new LongAdder();
    /** Entries sent to workers in record requests, summed over workers. */
    final LongAdder recordEntriesSent = new LongAdder();
    /** Sampled entries sent to workers in probes (two-phase broadcast), summed over workers. */
    final LongAdder probeEntriesSent = new LongAdder();
    /** Probe requests sent, one per worker per lookup (two-phase broadcast). */
    final LongAdder probesSent = new LongAdder();
    /** Worker lookups a two-phase broadcast did not send (the worker had no candidate). */
    final LongAdder lookupsSpared = new LongAdder();

    /**
     * A master over {@code workers} (numbered 0..n-1 by {@link DedupWorker#id()}), cutting input
     * segments at {@code uSegment} (the workers' U_segment) and re-picking a stream's home worker
     * after {@code homeBudget} unanchored new fingerprints; lookups broadcast as
     * {@link ClusterBroadcast#DEFAULT}.
     */
    public ClusterFingerprintIndex(List<? extends DedupWorker> workers, ClusterMode mode, int uSegment, int homeBudget) {
        this(workers, mode, ClusterBroadcast.DEFAULT, uSegment, homeBudget);
    }

    /** As above, with lookups broadcast as {@code broadcast} (nearest mode only; hash mode never broadcasts). */
    public ClusterFingerprintIndex(List<? extends DedupWorker> workers, ClusterMode mode, ClusterBroadcast broadcast, int uSegment,
            int homeBudget) {
        if (workers.isEmpty() || workers.size() > MAX_WORKERS) {
            throw new IllegalArgumentException("a cluster index needs 1 to " + MAX_WORKERS + " workers, not " + workers.size());
        }
        long[] ids = new long[workers.size()];
        for (int i = 0; i < workers.size(); i++) {
            if (workers.get(i).id() != i) {
                throw new IllegalArgumentException("worker " + i + " calls itself " + workers.get(i).id());
            }
            ids[i] = workers.get(i).memberId();
            if (ids[i] == DedupStream.NO_WORKER) {
                throw new IllegalArgumentException("worker " + i + " has member id " + ids[i] + ", which means no worker");
            }
            for (int j = 0; j < i; j++) {
                if (ids[j] == ids[i]) {
                    throw new IllegalArgumentException("workers " + j + " and " + i + " have the same member id " + ids[i]
                            + ": a storing worker would name either");
                }
            }
        }
        if (homeBudget < 1) {
            throw new IllegalArgumentException("home budget must be positive: " + homeBudget);
        }
        this.workers = List.copyOf(workers);
        this.memberIds = ids;
        this.mode = mode;
        this.broadcast = broadcast;
        this.segmenter = new InputSegmenter(uSegment);
        this.homeBudget = homeBudget;
        this.knownLoad = new AtomicLongArray(workers.size());
        for (DedupWorker w : this.workers) {
            knownLoad.set(w.id(), w.load().storedEntries());
        }
    }

    /**
     * {@code count} workers in this process, worker i in {@code dataDir/cluster/worker-i}, each a
     * Sungem engine with {@code settings} (its own SFI and container cache of the configured sizes, as
     * a separate node would have). The home budget is half a container, the fill at which the
     * standalone engine replaces a stream's default container.
     */
    public static ClusterFingerprintIndex inProcess(Path dataDir, int count, ClusterMode mode, SungemSettings settings,
            Clock clock) {
        return inProcess(dataDir, count, mode, ClusterBroadcast.DEFAULT, settings, clock);
    }

    /** As above, with lookups broadcast as {@code broadcast}. */
    public static ClusterFingerprintIndex inProcess(Path dataDir, int count, ClusterMode mode, ClusterBroadcast broadcast,
            SungemSettings settings, Clock clock) {
        if (count < 1) {
            throw new IllegalArgumentException("a cluster needs at least one worker, not " + count);
        }
        List<LocalDedupWorker> ws = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                ws.add(new LocalDedupWorker(i, dataDir.resolve("cluster").resolve("worker-" + i), settings, clock));
            }
        } catch (RuntimeException e) {
            ws.forEach(LocalDedupWorker::close);
            throw e;
        }
        return new ClusterFingerprintIndex(ws, mode, broadcast, settings.uSegment(), Math.max(1, settings.uContainer() / 2));
    }

    @Override
    public DedupStream openStream(String volumeName) {
        if (closed) {
            throw new IllegalStateException("the cluster index is closed");
        }
        long id = nextStreamId();
        return mode == ClusterMode.NEAREST ? new ClusterDedupStream(this, id) : new HashSplitDedupStream(this, id);
    }

    /** A stream number not used before in this process (see {@link #NEXT_STREAM}). */
    static long nextStreamId() {
        return NEXT_STREAM.incrementAndGet();
    }

    /** Tells every worker that stream {@code id} ended, so that they drop its state. */
    void closeStream(long id) {
        for (DedupWorker w : workers) {
            w.closeStream(id);
        }
    }

    /** Notes a worker's reported load. */
    void noteLoad(DedupLoad load) {
        knownLoad.set(load.worker(), load.storedEntries());
    }

    /** The worker with the fewest stored entries as far as the master knows. */
    int leastLoaded() {
        int best = 0;
        for (int w = 1; w < workers.size(); w++) {
            if (knownLoad.get(w) < knownLoad.get(best)) {
                best = w;
            }
        }
        return best;
    }

    @Override
    public void forget(long pbn, byte[] fps, int off) {
        byte[] one = new byte[32];
        System.arraycopy(fps, off, one, 0, 32);
        forgetAll(new long[] {pbn}, one, 1);
    }

    /**
     * In nearest mode every worker forgets the PBNs (any of them may hold one); in hash mode only the
     * worker the fingerprint hashes to can, so the others keep no stale marks for them.
     */
    @Override
    public void forgetAll(long[] pbns, byte[] fps, int count) {
        if (count < 0 || pbns.length < count || fps.length < count * 32L) {
            throw new IllegalArgumentException("forget: " + count + " entries do not fit the arrays");
        }
        if (mode == ClusterMode.NEAREST) {
            for (DedupWorker w : workers) {
                w.forget(pbns, fps, count);
            }
        } else {
            int n = workers.size();
            long[][] p = new long[n][count];
            byte[][] f = new byte[n][count * 32];
            int[] c = new int[n];
            for (int i = 0; i < count; i++) {
                int w = HashSplitDedupStream.workerOf(fps, i, n);
                p[w][c[w]] = pbns[i];
                System.arraycopy(fps, i * 32, f[w], c[w] * 32, 32);
                c[w]++;
            }
            for (int w = 0; w < n; w++) {
                if (c[w] > 0) {
                    workers.get(w).forget(p[w], f[w], c[w]);
                }
            }
        }
        forgotten.add(count);
    }

    @Override
    public void flush() {
        for (DedupWorker w : workers) {
            w.flush();
        }
    }

    /** The workers' loads and counters, in worker order. */
    public List<DedupLoad> workerLoads() {
        List<DedupLoad> l = new ArrayList<>(workers.size());
        for (DedupWorker w : workers) {
            l.add(w.load());
        }
        return l;
    }

    /** The workers (tests and diagnostics). */
    public List<DedupWorker> workers() {
        return workers;
    }

    /** How work is spread. */
    public ClusterMode mode() {
        return mode;
    }

    /** Merge and routing counters: {split runs, misses routed to the nearest, misses routed home}. */
    public long[] routingCounts() {
        return new long[] {splitRuns.sum(), routedNearest.sum(), routedHome.sum()};
    }

    /**
     * What the master sent to workers, summed over workers (for a wire-traffic model): {entries in
     * lookup requests, entries in record requests, sampled entries in probes, probes}.
     */
    public long[] entriesSent() {
        return new long[] {lookupEntriesSent.sum(), recordEntriesSent.sum(), probeEntriesSent.sum(), probesSent.sum()};
    }

    /** Worker lookups a two-phase broadcast did not send, as the worker had no candidate container. */
    public long lookupsSpared() {
        return lookupsSpared.sum();
    }

    /** How lookups reach the workers in nearest mode. */
    public ClusterBroadcast broadcast() {
        return broadcast;
    }

    @Override
    public IndexStats stats() {
        long sfiHits = 0;
        long loaded = 0;
        long memory = 0;
        for (DedupLoad l : workerLoads()) {
            sfiHits += l.sfiHits();
            loaded += l.containersLoaded();
            memory += l.memoryBytes();
        }
        return new IndexStats(lookups.sum(), hits.sum(), recorded.sum(), forgotten.sum(), sfiHits, loaded, memory,
                busyNanos.sum());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (DedupWorker w : workers) {
            try {
                w.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
