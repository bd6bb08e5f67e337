package org.holdfast.server.ingest.cluster;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;

/**
 * The master's registered workers' GC delta links (distributed GC), by worker id: one is added when
 * its worker registers and removed when its connection ends. The master's GC sends through them
 * ({@link GcDeltaSenders}), told of each new link by {@link #whenAdded}.
 */
public final class GcDeltaLinks {
    private final Map<Long, RemoteGcDeltas> links = new ConcurrentSkipListMap<>();
    private final List<LongConsumer> added = new CopyOnWriteArrayList<>();

    void add(long workerId, RemoteGcDeltas link) {
        RemoteGcDeltas old = links.put(workerId, link);
        if (old != null && old != link) {
            old.lost("superseded by a new registration");
        }
        for (LongConsumer l : added) {
            l.accept(workerId);
        }
    }

    /** Calls {@code listener} with the worker id after each link is added (on the link's event loop: it must not block). */
    public void whenAdded(LongConsumer listener) {
        added.add(listener);
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
