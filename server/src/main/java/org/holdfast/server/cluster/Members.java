package org.holdfast.server.cluster;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * The master's table of workers, by worker id and by node name, and the next worker id to hand out
 * (never one that was handed out before, also of a removed worker). Not thread-safe:
 * {@link WorkerRegistry} uses it under its lock.
 */
final class Members {
    private final Map<String, Member> byNode = new HashMap<>();
    private final Map<Long, Member> byId = new HashMap<>();
    private long nextId = 1;

    /**
     * The workers {@code store} remembers, each lost until it registers.
     *
     * @throws IllegalStateException if the stored records repeat an id or node name or overlap in range
     */
    Members(MembershipStore store) {
        for (WorkerRecord r : store.workers()) {
            for (Member m : byId.values()) {
                if (m.record().range().overlaps(r.range()) || m.record().nodeName().equals(r.nodeName())) {
                    throw new IllegalStateException("the catalog's cluster records conflict: worker " + r.workerId() + " ("
                            + r.nodeName() + ", " + r.range() + ") and worker " + m.record().workerId() + " ("
                            + m.record().nodeName() + ", " + m.record().range() + "); restore the master's catalog from a backup");
                }
            }
            if (byId.containsKey(r.workerId())) {
                throw new IllegalStateException("the catalog holds worker id " + r.workerId() + " twice; restore it from a backup");
            }
            Member m = new Member(r);
            byId.put(r.workerId(), m);
            byNode.put(r.nodeName(), m);
            nextId = Math.max(nextId, r.workerId() + 1);
        }
        nextId = Math.max(nextId, store.highestRemovedId() + 1);
    }

    /** Worker {@code workerId}, or null if none is registered. */
    Member get(long workerId) {
        return byId.get(workerId);
    }

    /**
     * Worker {@code workerId}.
     *
     * @throws UnknownWorkerException if none is registered
     */
    Member require(long workerId) {
        Member m = byId.get(workerId);
        if (m == null) {
            throw new UnknownWorkerException(workerId);
        }
        return m;
    }

    /** The worker node {@code nodeName} is, or null if none. */
    Member byNode(String nodeName) {
        return byNode.get(nodeName);
    }

    /** Worker {@code workerId} if its connection of {@code epoch} is open and the current one, else null. */
    Member current(long workerId, long epoch) {
        Member m = byId.get(workerId);
        return m != null && m.isCurrent(epoch) ? m : null;
    }

    /** The id the next new worker gets. */
    long nextId() {
        return nextId;
    }

    /** Adds a new worker, stored as {@code r} with the {@link #nextId()}, which moves on. */
    Member add(WorkerRecord r) {
        Member m = new Member(r);
        byId.put(r.workerId(), m);
        byNode.put(r.nodeName(), m);
        nextId++;
        return m;
    }

    /** Forgets worker {@code m} (removed from the store already); its id is not handed out again. */
    void remove(Member m) {
        byId.remove(m.record().workerId());
        byNode.remove(m.record().nodeName());
    }

    /** Files worker {@code m} under node {@code newNodeName} instead of its record's. */
    void rename(Member m, String newNodeName) {
        byNode.remove(m.record().nodeName());
        byNode.put(newNodeName, m);
    }

    /** How many node names token {@code tokenId} is bound to (removed workers no longer count). */
    long heldBy(String tokenId) {
        return byNode.values().stream().filter(o -> o.record().tokenId().equals(tokenId)).count();
    }

    /** Every worker, in no order. */
    Collection<Member> all() {
        return byId.values();
    }
}
