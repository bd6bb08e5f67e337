package org.holdfast.server.ingest.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The master's registered workers' range sweep ends (distributed GC), by worker id: one is added
 * when its worker registers and removed when its connection ends. Used by {@link WorkerSweeps}.
 */
public final class RangeSweepLinks {
    private final Map<Long, RemoteRangeSweep> links = new ConcurrentSkipListMap<>();

    void add(long workerId, RemoteRangeSweep link) {
        RemoteRangeSweep old = links.put(workerId, link);
        if (old != null && old != link) {
            old.lost("superseded by a new registration");
        }
    }

    void remove(RemoteRangeSweep link) {
        links.values().remove(link);
    }

    /** Worker {@code workerId}'s sweep end if its link is up, else null. */
    public RemoteRangeSweep up(long workerId) {
        RemoteRangeSweep l = links.get(workerId);
        return l != null && l.isUp() ? l : null;
    }
}
