package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
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

    /**
     * Proxies for the links that are up now, by worker id, numbered 0..n-1 in worker-id order: one
     * snapshot, so that a caller checks and uses the same set.
     */
    public SortedMap<Long, RemoteDedupWorker> upByWorkerId() {
        SortedMap<Long, RemoteDedupWorker> up = new TreeMap<>();
        links.forEach((id, link) -> {
            if (link.isUp()) {
                up.put(id, new RemoteDedupWorker(up.size(), link));
            }
        });
        return up;
    }

    /** Proxies for the links that are up now, numbered 0..n-1 in worker-id order. */
    public List<RemoteDedupWorker> workers() {
        return new ArrayList<>(upByWorkerId().values());
    }
}
