package org.holdfast.server.ingest.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The master's registered workers' range stores (data on workers), by worker id: one is added when
 * its worker registers and removed when its connection ends. Not yet used by ingest, restore or GC.
 */
public final class RangeStores {
    private final Map<Long, RemoteRangeStore> stores = new ConcurrentSkipListMap<>();

    void add(long workerId, RemoteRangeStore store) {
        RemoteRangeStore old = stores.put(workerId, store);
        if (old != null && old != store) {
            old.lost("superseded by a new registration");
        }
    }

    void remove(RemoteRangeStore store) {
        stores.values().remove(store);
    }

    /** Worker {@code workerId}'s range store if its link is up, else null. */
    public RemoteRangeStore up(long workerId) {
        RemoteRangeStore s = stores.get(workerId);
        return s != null && s.isUp() ? s : null;
    }
}
