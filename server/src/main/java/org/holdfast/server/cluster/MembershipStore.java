package org.holdfast.server.cluster;

import java.util.List;
import java.util.Map;

/** Where the master keeps worker assignments so that a restart gives every node its id and range back. */
public interface MembershipStore {
    /** Every worker ever registered, in any order. */
    List<WorkerRecord> workers();

    /** Stores {@code record} durably (synced) before its registration is answered. */
    void put(WorkerRecord record);

    /**
     * Deletes worker {@code workerId}'s record durably and remembers its id as retired, so that no
     * later registration gets that id or its range again (its PBNs may still hold data).
     */
    void remove(long workerId);

    /** The highest worker id ever removed, 0 if none: ids (and so ranges) are never handed out twice. */
    long highestRemovedId();

    /**
     * The index start-over marks kept, by worker id (a store written before marks were kept has none).
     * A store that keeps no marks returns none.
     */
    default Map<Long, StartOverMark> startOverMarks() {
        return Map.of();
    }

    /** Stores worker {@code workerId}'s start-over mark durably (synced), replacing the one it had. */
    default void putStartOverMark(long workerId, StartOverMark mark) {
        throw new UnsupportedOperationException("this membership store keeps no start-over marks");
    }

    /** Deletes worker {@code workerId}'s start-over mark durably (synced); none: nothing changes. {@link #remove} deletes it too. */
    default void clearStartOverMark(long workerId) {
        throw new UnsupportedOperationException("this membership store keeps no start-over marks");
    }

    /** The takeover fences kept, by worker id (a store written before fences were kept has none). */
    default Map<Long, TakeoverFence> takeoverFences() {
        return Map.of();
    }

    /**
     * Stores worker {@code workerId}'s takeover fence, replacing the one it had; synced if {@code sync}
     * (a raised archive epoch), else left to the write-ahead log (a raised PBN floor, heard at every
     * heartbeat of a worker that stores blocks). {@link #remove} deletes it too.
     */
    default void putTakeoverFence(long workerId, TakeoverFence fence, boolean sync) {
        throw new UnsupportedOperationException("this membership store keeps no takeover fences");
    }

    /** The node generations kept, by worker id (a store written before they were kept has none). */
    default Map<Long, NodeGeneration> nodeGenerations() {
        return Map.of();
    }

    /** Stores worker {@code workerId}'s node generation durably (synced), replacing the one it had. {@link #remove} deletes it too. */
    default void putNodeGeneration(long workerId, NodeGeneration generation) {
        throw new UnsupportedOperationException("this membership store keeps no node generations");
    }

    /**
     * The longest {@code lost-after} this master may have told its workers and not yet outwaited
     * since (null: none kept, a catalog before it was kept): a node that registered under it may hold
     * a delete lease of that length after a restart with a shorter setting.
     */
    default java.time.Duration toldLostAfter() {
        return null;
    }

    /** Stores {@link #toldLostAfter()} durably (synced). */
    default void putToldLostAfter(java.time.Duration lostAfter) {
    }

    /** Keeps everything in memory: for tests and tools that need no persistence. */
    static MembershipStore inMemory() {
        java.util.Map<Long, WorkerRecord> map = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicLong removed = new java.util.concurrent.atomic.AtomicLong();
        Map<Long, StartOverMark> marks = new java.util.concurrent.ConcurrentHashMap<>();
        Map<Long, TakeoverFence> fences = new java.util.concurrent.ConcurrentHashMap<>();
        Map<Long, NodeGeneration> generations = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicReference<java.time.Duration> told = new java.util.concurrent.atomic.AtomicReference<>();
        return new MembershipStore() {
            @Override
            public java.time.Duration toldLostAfter() {
                return told.get();
            }

            @Override
            public void putToldLostAfter(java.time.Duration lostAfter) {
                told.set(lostAfter);
            }

            @Override
            public List<WorkerRecord> workers() {
                return List.copyOf(map.values());
            }

            @Override
            public void put(WorkerRecord record) {
                map.put(record.workerId(), record);
            }

            @Override
            public void remove(long workerId) {
                map.remove(workerId);
                marks.remove(workerId);
                fences.remove(workerId);
                generations.remove(workerId);
                removed.accumulateAndGet(workerId, Math::max);
            }

            @Override
            public Map<Long, StartOverMark> startOverMarks() {
                return Map.copyOf(marks);
            }

            @Override
            public void putStartOverMark(long workerId, StartOverMark mark) {
                marks.put(workerId, mark);
            }

            @Override
            public void clearStartOverMark(long workerId) {
                marks.remove(workerId);
            }

            @Override
            public Map<Long, TakeoverFence> takeoverFences() {
                return Map.copyOf(fences);
            }

            @Override
            public void putTakeoverFence(long workerId, TakeoverFence fence, boolean sync) {
                fences.put(workerId, fence);
            }

            @Override
            public Map<Long, NodeGeneration> nodeGenerations() {
                return Map.copyOf(generations);
            }

            @Override
            public void putNodeGeneration(long workerId, NodeGeneration generation) {
                generations.put(workerId, generation);
            }

            @Override
            public long highestRemovedId() {
                return removed.get();
            }
        };
    }
}
