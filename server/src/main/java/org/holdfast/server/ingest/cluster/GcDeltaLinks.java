package org.holdfast.server.ingest.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The master's registered workers' GC delta links (distributed GC), by worker id: one is added when
 * its worker registers and removed when its connection ends. Not yet used by the master's GC.
 */
public final class GcDeltaLinks {
    private final Map<Long, RemoteGcDeltas> links = new ConcurrentSkipListMap<>();

    void add(long workerId, RemoteGcDeltas link) {
        RemoteGcDeltas old = links.put(workerId, link);
        if (old != null && old != link) {
            old.lost("superseded by a new registration");
        }
    }

    void remove(RemoteGcDeltas link) {
        links.values().remove(link);
    }

    /** Worker {@code workerId}'s GC delta link if it is up, else null. */
    public RemoteGcDeltas up(long workerId) {
        RemoteGcDeltas l = links.get(workerId);
        return l != null && l.isUp() ? l : null;
    }
}
