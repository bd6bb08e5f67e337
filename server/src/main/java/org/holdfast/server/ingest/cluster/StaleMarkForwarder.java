package org.holdfast.server.ingest.cluster;

import java.util.Map;
import java.util.SortedMap;
import org.holdfast.common.protocol.StaleMarks;
import org.holdfast.common.protocol.StaleMarksTaken;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.engine.ClusterMode;

/**
 * The master's forwarding of a worker's stale marks (cluster version 8, thesis 7.2.4): the blocks a
 * worker's range sweep freed go, as DEDUP_FORGET over the dedup links, to every other worker's engine
 * that may hold them, so that none answers a freed PBN as a duplicate again. In nearest mode that is
 * every other worker (a segment's entries are recorded where it matched, and the master does not know
 * which containers hold a PBN); in hash mode none: a PBN of a worker's range is only ever recorded by
 * that worker's engine (the storing worker is the fingerprint's hash owner, which stores the block in
 * its own range), which forgot it in its sweep. The master keeps nothing: the marks stay in the
 * sender's outbox until this answers TAKEN, which it does only once every other registered worker's
 * engine acknowledged the forget; while one is not connected it answers LATER and forwards nothing
 * new to it (a forget that reached some engines reaches them again, harmlessly).
 */
public final class StaleMarkForwarder {
    private final DedupLinks links;
    private final WorkerRegistry registry;
    private final ClusterMode mode;

    /** Over the dedup links {@code links} of the workers in {@code registry}, whose engines run in {@code mode}. */
    public StaleMarkForwarder(DedupLinks links, WorkerRegistry registry, ClusterMode mode) {
        this.links = links;
        this.registry = registry;
        this.mode = mode;
    }

    /** Forwards {@code marks} of worker {@code fromWorker} (their PBNs checked in its range); blocks until the engines answered. */
    StaleMarksTaken forward(long fromWorker, StaleMarks marks) {
        if (mode == ClusterMode.HASH) {
            return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.TAKEN, "hash mode: only the owner's engine holds its range's PBNs");
        }
        // one snapshot for the check and the sends, as RemoteFingerprintIndex.forgetAll
        SortedMap<Long, RemoteDedupWorker> up = links.upByWorkerId();
        for (WorkerView w : registry.workers()) {
            if (w.workerId() != fromWorker && !up.containsKey(w.workerId())) {
                return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.LATER, "dedup worker " + w.nodeName() + " (id " + w.workerId()
                        + ") is not connected: its engine may hold the freed blocks; the marks are forwarded once it is back");
            }
        }
        for (Map.Entry<Long, RemoteDedupWorker> e : up.entrySet()) {
            if (e.getKey() != fromWorker) {
                try {
                    e.getValue().forget(marks.pbns(), marks.fps(), marks.count());
                } catch (RuntimeException x) {
                    return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.LATER, "dedup worker id " + e.getKey() + " did not take the"
                            + " forget (" + x.getMessage() + "); the marks are forwarded again");
                }
            }
        }
        return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.TAKEN, "");
    }
}
