package org.holdfast.server.ingest.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The master's registered workers' counts check ends (cluster version 7), by worker id: one is added
 * when a worker of that version registers and removed when its connection ends.
 */
public final class CountsCheckLinks {
    private final Map<Long, RemoteCountsCheck> links = new ConcurrentSkipListMap<>();

    void add(long workerId, RemoteCountsCheck link) {
        RemoteCountsCheck old = links.put(workerId, link);
        if (old != null && old != link) {
            old.lost("superseded by a new registration");
        }
    }

    void remove(RemoteCountsCheck link) {
        links.values().remove(link);
    }

    /** Worker {@code workerId}'s counts check end if its link is up, else null. */
    public RemoteCountsCheck up(long workerId) {
        RemoteCountsCheck l = links.get(workerId);
        return l != null && l.isUp() ? l : null;
    }
}
