package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The master's registered workers' dedup links, by worker id: a link is added when its worker
 * registers and removed when its connection ends. {@link #workers()} numbers the ones up 0..n-1
 * in worker-id order, so a master index built from it keeps sending a worker's data to the same
 * worker as long as the set of workers is the same.
 */
public final class DedupLinks {
    private final Map<Long, DedupLink> links = new ConcurrentSkipListMap<>();

    void add(long workerId, DedupLink link) {
        DedupLink old = links.put(workerId, link);
        if (old != null && old != link) {
            old.lost("superseded by a new registration");
        }
    }

    void remove(DedupLink link) {
        links.values().remove(link);
    }

    /** The ids of the workers whose link is up now. */
    public java.util.Set<Long> upIds() {
        java.util.Set<Long> ids = new java.util.TreeSet<>();
        links.forEach((id, link) -> {
            if (link.isUp()) {
                ids.add(id);
            }
        });
        return ids;
    }

    /** Proxies for the links that are up now, numbered 0..n-1 in worker-id order. */
    public List<RemoteDedupWorker> workers() {
        List<RemoteDedupWorker> l = new ArrayList<>();
        for (DedupLink link : links.values()) {
            if (link.isUp()) {
                l.add(new RemoteDedupWorker(l.size(), link));
            }
        }
        return l;
    }
}
