package org.holdfast.server.cluster;

import java.util.List;

/** Where the master keeps worker assignments so that a restart gives every node its id and range back. */
public interface MembershipStore {
    /** Every worker ever registered, in any order. */
    List<WorkerRecord> workers();

    /** Stores {@code record} durably (synced) before its registration is answered. */
    void put(WorkerRecord record);

    /** Keeps everything in memory: for tests and tools that need no persistence. */
    static MembershipStore inMemory() {
        java.util.Map<Long, WorkerRecord> map = new java.util.concurrent.ConcurrentHashMap<>();
        return new MembershipStore() {
            @Override
            public List<WorkerRecord> workers() {
                return List.copyOf(map.values());
            }

            @Override
            public void put(WorkerRecord record) {
                map.put(record.workerId(), record);
            }
        };
    }
}
