package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * its own range), which forgot it in its sweep. The marks stay in the sender's outbox until this answers
 * TAKEN. With {@link OwedForgets} (a master of this release) that is once every connected other worker's
 * engine acknowledged the forget and the part is kept, synced, for each registered worker whose link is
 * down, which gets it before its next link serves a lookup ({@link #readyForService}): a worker lost for
 * good no longer holds up the others' marks. Without (null) a worker not connected makes it LATER, as
 * before. A forget that reached some engines reaches them again, harmlessly.
 */
public final class StaleMarkForwarder {
    private static final System.Logger LOG = System.getLogger(StaleMarkForwarder.class.getName());
    private final DedupLinks links;
    private final WorkerRegistry registry;
    private final ClusterMode mode;
    private final OwedForgets owed;

    /** Over the dedup links {@code links} of the workers in {@code registry}, whose engines run in {@code mode}; nothing owed: LATER. */
    public StaleMarkForwarder(DedupLinks links, WorkerRegistry registry, ClusterMode mode) {
        this(links, registry, mode, null);
    }

    /** As above, keeping what a worker whose link is down is owed in {@code owed} (null: LATER while one is down). */
    public StaleMarkForwarder(DedupLinks links, WorkerRegistry registry, ClusterMode mode, OwedForgets owed) {
        this.links = links;
        this.registry = registry;
        this.mode = mode;
        this.owed = owed;
    }

    /** Forwards {@code marks} of worker {@code fromWorker} (their PBNs checked in its range); blocks until the engines answered. */
    StaleMarksTaken forward(long fromWorker, StaleMarks marks) {
        if (mode == ClusterMode.HASH) {
            return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.TAKEN, "hash mode: only the owner's engine holds its range's PBNs");
        }
        // one snapshot for the check and the sends, as RemoteFingerprintIndex.forgetAll
        SortedMap<Long, RemoteDedupWorker> up = links.upByWorkerId();
        List<WorkerView> down = new ArrayList<>();
        Set<Long> registered = new HashSet<>();
        for (WorkerView w : registry.workers()) {
            registered.add(w.workerId());
            if (w.workerId() != fromWorker && !up.containsKey(w.workerId())) {
                if (owed == null) {
                    return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.LATER, "dedup worker " + w.nodeName() + " (id "
                            + w.workerId() + ") is not connected: its engine may hold the freed blocks; the marks are forwarded once it"
                            + " is back");
                }
                down.add(w);
            }
        }
        if (owed != null) {
            owed.retain(registered); // a removed worker is owed nothing
        }
        for (Map.Entry<Long, RemoteDedupWorker> e : up.entrySet()) {
            if (e.getKey() != fromWorker) {
                try {
                    e.getValue().forget(marks.pbns(), marks.fps(), marks.count());
                } catch (RuntimeException x) {
                    if (owed == null || e.getValue().link().isUp()) {
                        // a link still in service (its engine failed the forget) is owed nothing: it would not get it before its lookups
                        return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.LATER, "dedup worker id " + e.getKey() + " did not take"
                                + " the forget (" + x.getMessage() + "); the marks are forwarded again");
                    }
                    owed.owe(e.getKey(), e.getValue().link().name(), marks); // its link ended: delivered before its next one serves
                }
            }
        }
        for (WorkerView w : down) {
            owed.owe(w.workerId(), w.nodeName(), marks);
        }
        return StaleMarksTaken.of(marks.partId(), StaleMarksTaken.TAKEN, "");
    }

    /**
     * Called on the forwarding thread (the one {@link #forward} runs on, so no part is owed in between) when worker
     * {@code workerId}'s new dedup link is up and before it goes into service: delivers what the worker is owed and,
     * if it is distrusted, sets {@code others} (its registration's other ranges) as misses on the link. False if the
     * link must not go into service: a delivery failed (the parts stay for its next link) or it ended meanwhile.
     */
    boolean readyForService(long workerId, String nodeName, DedupLink link, OtherRangePbns others) {
        if (owed == null) {
            return true;
        }
        try {
            long n = owed.deliver(workerId, nodeName, new RemoteDedupWorker(0, workerId, link));
            if (n > 0) {
                LOG.log(System.Logger.Level.INFO, "delivered " + n + " forgets of blocks other workers freed, owed to dedup worker "
                        + nodeName + " (id " + workerId + ") while its link was down, before its link serves lookups");
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not deliver the forgets owed to dedup worker " + nodeName + " (id " + workerId
                    + "): " + e.getMessage() + "; its link does not serve dedup calls, and they are delivered when it registers again"
                    + " (restart the worker if its link stays up)");
            return false;
        }
        if (owed.distrusted(workerId)) {
            if (others == null) {
                LOG.log(System.Logger.Level.ERROR, "dedup worker " + nodeName + " (id " + workerId + ") is distrusted and its range"
                        + " does not fit the cluster's layout, so its answers cannot be checked: its link does not serve dedup calls");
                return false;
            }
            link.distrust(others);
        }
        return link.isUp();
    }
}
