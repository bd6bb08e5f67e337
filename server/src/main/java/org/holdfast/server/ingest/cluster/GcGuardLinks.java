package org.holdfast.server.ingest.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The master's registered workers' grace guards (distributed GC), by worker id: one is added when
 * its worker registers and removed when its connection ends. Used by {@link RangeReferenceGuard}.
 */
public final class GcGuardLinks {
    private final Map<Long, RemoteGcGuard> links = new ConcurrentSkipListMap<>();

    void add(long workerId, RemoteGcGuard link) {
        RemoteGcGuard old = links.put(workerId, link);
        if (old != null && old != link) {
            old.lost("superseded by a new registration");
        }
    }

    void remove(RemoteGcGuard link) {
        links.values().remove(link);
    }

    /** The registered guard whose range holds {@code pbn} (up or not), or null. */
    public RemoteGcGuard owner(long pbn) {
        for (RemoteGcGuard g : links.values()) {
            if (g.range().contains(pbn)) {
                return g;
            }
        }
        return null;
    }

    /** Worker {@code workerId}'s guard if its link is up, else null. */
    public RemoteGcGuard up(long workerId) {
        RemoteGcGuard g = links.get(workerId);
        return g != null && g.isUp() ? g : null;
    }
}
