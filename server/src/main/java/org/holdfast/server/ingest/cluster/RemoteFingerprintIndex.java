package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.engine.ClusterBroadcast;
import org.holdfast.server.engine.ClusterFingerprintIndex;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.IndexStats;
import org.holdfast.server.engine.SungemSettings;

/**
 * The master's dedup index over the workers registered with it (holdfast.dedup.engine=cluster,
 * role master): each stream is served by a {@link ClusterFingerprintIndex} over the workers whose
 * link is up when the stream opens (a new one when that set changed, so a worker that comes back
 * takes part in the next backup). No worker up: opening a stream fails, naming what to do. A worker
 * lost mid-backup fails that backup ({@link DedupWorkerLostException}); nothing is taken as a
 * duplicate that a worker did not answer.
 *
 * <p>Forgetting freed PBNs must reach every worker that may hold them, so it goes to all of them
 * (in hash mode too: the set of workers may have changed) and is refused while any registered
 * worker is not connected (GC then frees nothing and says why): a worker that came back
 * having missed a forget could answer a freed PBN.
 */
public final class RemoteFingerprintIndex implements FingerprintIndex {
    private final DedupLinks links;
    private final WorkerRegistry registry;
    private final ClusterMode mode;
    private final ClusterBroadcast broadcast;
    private final int uSegment;
    private final int homeBudget;
    private ClusterFingerprintIndex current; // guarded by this
    private List<DedupLink> currentLinks = List.of(); // guarded by this

    /** Over {@code links} of the workers in {@code registry}, with the workers' segment size and half a container as home budget. */
    public RemoteFingerprintIndex(DedupLinks links, WorkerRegistry registry, ClusterMode mode, SungemSettings settings) {
        this(links, registry, mode, ClusterBroadcast.DEFAULT, settings);
    }

    /** As above, with lookups broadcast as {@code broadcast}. */
    public RemoteFingerprintIndex(DedupLinks links, WorkerRegistry registry, ClusterMode mode, ClusterBroadcast broadcast,
            SungemSettings settings) {
        this.links = links;
        this.registry = registry;
        this.mode = mode;
        this.broadcast = broadcast;
        this.uSegment = settings.uSegment();
        this.homeBudget = Math.max(1, settings.uContainer() / 2);
    }

    /** The index over the workers up now; a new one if they changed. */
    private synchronized ClusterFingerprintIndex index() {
        List<RemoteDedupWorker> up = links.workers();
        if (up.isEmpty()) {
            throw new DedupUnavailableException("no dedup worker is connected to this master (holdfast.dedup.engine=cluster); start"
                    + " the workers (holdfast.cluster.role=worker) and wait until GET /api/v1/cluster shows them up, or use"
                    + " holdfast.dedup.engine=sungem");
        }
        List<DedupLink> l = new ArrayList<>();
        up.forEach(w -> l.add(w.link()));
        if (current == null || !l.equals(currentLinks)) {
            current = new ClusterFingerprintIndex(up, mode, broadcast, uSegment, homeBudget);
            currentLinks = l;
        }
        return current;
    }

    @Override
    public DedupStream openStream(String volumeName) {
        return index().openStream(volumeName);
    }

    @Override
    public void forget(long pbn, byte[] fps, int off) {
        forgetAll(new long[] {pbn}, java.util.Arrays.copyOfRange(fps, off, off + 32), 1);
    }

    @Override
    public void forgetAll(long[] pbns, byte[] fps, int count) {
        // one snapshot for the check and the sends: a worker that drops in between must fail its call
        // (and so this GC pass), never be skipped, or it could come back still naming freed PBNs
        SortedMap<Long, RemoteDedupWorker> up = links.upByWorkerId();
        for (WorkerView w : registry.workers()) {
            if (!up.containsKey(w.workerId())) {
                throw new IllegalStateException("cannot free blocks while dedup worker " + w.nodeName() + " (id " + w.workerId()
                        + ") is not connected: its index could still name them; bring the worker back, GC frees them then");
            }
        }
        // every worker, in either mode: with another set of workers a hash could name another one
        for (RemoteDedupWorker w : up.values()) {
            w.forget(pbns, fps, count);
        }
    }

    /** Flushes the workers up now (a lost one has nothing more to flush from this master). */
    @Override
    public void flush() {
        for (RemoteDedupWorker w : links.workers()) {
            w.flush();
        }
    }

    @Override
    public synchronized IndexStats stats() {
        return current == null ? new IndexStats(0, 0, 0, 0, 0, 0, 0, 0) : current.stats();
    }

    /** The links belong to the cluster port; nothing to close here. */
    @Override
    public void close() {
    }
}
