package org.holdfast.server.cluster;

import java.util.HashMap;
import java.util.Map;

/**
 * The master's node generations per worker id (cluster version 7): at each registration of a node that
 * presents one it refuses an older copy of the range data (a cloned VM, a disk restored from an image)
 * and issues the next generation, which the worker stores in its range data before it serves. Kept in
 * the {@link MembershipStore} (synced) before REGISTERED names it. Not thread-safe: {@link WorkerRegistry}
 * calls it under its lock.
 */
final class NodeGenerations {
    private final MembershipStore store;
    private final Map<Long, NodeGeneration> byId = new HashMap<>();

    NodeGenerations(MembershipStore store) {
        this.store = store;
        byId.putAll(store.nodeGenerations());
    }

    /**
     * Refuses a node of worker {@code r} presenting {@code presented} (0: its range data holds none, a
     * fresh node; negative: a worker before version 7, which cannot be told apart) below the generation
     * the id acknowledged. Changes nothing.
     */
    void refuseOlderCopy(WorkerRecord r, long presented) {
        NodeGeneration g = of(r.workerId());
        if (presented >= 1 && presented < g.acknowledged()) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.OLDER_COPY, "range data of worker "
                    + r.workerId() + " on node " + r.nodeName() + " is an older copy (a cloned or restored disk?): generation "
                    + presented + ", the worker is at " + g.acknowledged() + "; serving it would hand out PBNs another copy handed out"
                    + " and miss blocks stored since. Move this node's <data-dir>/range-data away (on an empty one it registers as"
                    + " a fresh node), or, if this copy is the one to keep and the newer one is gone for good, delete its"
                    + " <data-dir>/range-data/node-generation and start it again; docs/operations.md \"A cloned disk\"");
        }
    }

    /**
     * Issues the next generation for a node of worker {@code workerId} that presented {@code presented}
     * (a generation it presents is acknowledged by that: it stored it) and stores it synced.
     *
     * @return the generation to send in REGISTERED
     */
    long issue(long workerId, long presented) {
        NodeGeneration g = of(workerId);
        long acknowledged = presented <= g.issued() ? Math.max(g.acknowledged(), presented) : presented;
        // a presented generation above any issued here (a restored catalog) is carried on, so a copy below it stays refused
        NodeGeneration next = new NodeGeneration(Math.max(g.issued(), presented) + 1, acknowledged);
        store.putNodeGeneration(workerId, next);
        byId.put(workerId, next);
        return next.issued();
    }

    /** The node of worker {@code workerId} showed it stored {@code generation} (its first heartbeat on the link that got it). */
    void acknowledged(long workerId, long generation) {
        NodeGeneration g = of(workerId);
        if (generation > g.acknowledged() && generation <= g.issued()) {
            NodeGeneration next = new NodeGeneration(g.issued(), generation);
            store.putNodeGeneration(workerId, next);
            byId.put(workerId, next);
        }
    }

    NodeGeneration of(long workerId) {
        return byId.getOrDefault(workerId, NodeGeneration.NONE);
    }

    /** Worker {@code workerId} was removed (its stored generation with it). */
    void forget(long workerId) {
        byId.remove(workerId);
    }
}
