package org.holdfast.server.ingest.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The master's registered workers' range stores (data on workers), by worker id: one is added when
 * its worker registers and removed when its connection ends (the PBNs it heard handed out are kept
 * by worker id, for the next registration's PBN floor). Used by ingest and restore through
 * {@link WorkerBlockHome} ({@code holdfast.cluster.data=workers}); not yet by GC.
 */
public final class RangeStores {
    private final Map<Long, RemoteRangeStore> stores = new ConcurrentSkipListMap<>();
    // past every PBN a removed store heard handed out, by worker id: a node registering before the ended link's lane task
    // raised the registry's floor must still start past them
    private final Map<Long, Long> endedPast = new java.util.concurrent.ConcurrentHashMap<>();

    void add(long workerId, RemoteRangeStore store) {
        RemoteRangeStore old = stores.put(workerId, store);
        if (old != null && old != store) {
            endedPast.merge(workerId, old.handedOutPast(), Math::max);
            old.lost("superseded by a new registration");
        }
    }

    void remove(RemoteRangeStore store) {
        for (Map.Entry<Long, RemoteRangeStore> e : stores.entrySet()) {
            if (e.getValue() == store) {
                endedPast.merge(e.getKey(), store.handedOutPast(), Math::max); // first: a reader always sees it in one of the two
                stores.remove(e.getKey(), store);
            }
        }
    }

    /**
     * One past the highest PBN worker {@code workerId} was heard handing out on its registered link
     * and on those removed since this master started (0: none), for the PBN floor.
     */
    long handedOutPast(long workerId) {
        RemoteRangeStore s = stores.get(workerId);
        return Math.max(s == null ? 0 : s.handedOutPast(), endedPast.getOrDefault(workerId, 0L));
    }

    /**
     * The {@code index}-th range store up in worker-id order, or null (tests and diagnostics: a
     * position shifts when a lower-id worker drops or registers, so blocks are placed by {@link #up}).
     */
    public RemoteRangeStore upAt(int index) {
        int i = 0;
        for (RemoteRangeStore s : stores.values()) {
            if (s.isUp() && i++ == index) {
                return s;
            }
        }
        return null;
    }

    /** The registered range store whose range holds {@code pbn} (up or not), or null. */
    public RemoteRangeStore owner(long pbn) {
        for (RemoteRangeStore s : stores.values()) {
            if (s.range().contains(pbn)) {
                return s;
            }
        }
        return null;
    }

    /** Worker {@code workerId}'s newest registered range store, up or not, or null (its name for messages). */
    public RemoteRangeStore registered(long workerId) {
        return stores.get(workerId);
    }

    /** Worker {@code workerId}'s range store if its link is up, else null. */
    public RemoteRangeStore up(long workerId) {
        RemoteRangeStore s = stores.get(workerId);
        return s != null && s.isUp() ? s : null;
    }
}
