package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongConsumer;
import org.holdfast.server.cluster.MembershipStore;
import org.holdfast.server.cluster.StartOverMark;

/**
 * The master's registered workers' dedup links, by worker id: a link is added when its worker
 * registers and removed when its connection ends. {@link #workers()} numbers the ones up 0..n-1
 * in worker-id order, so a master index built from it keeps sending a worker's data to the same
 * worker as long as the set of workers is the same.
 */
public final class DedupLinks {
    private final boolean askOnRegister;
    private final Map<Long, DedupLink> links = new ConcurrentSkipListMap<>();
    /** Each worker's newest link, kept after it ends: a lost worker's last index report stays readable. */
    private final Map<Long, DedupLink> newest = new ConcurrentSkipListMap<>();
    private volatile LongConsumer onRegistered = id -> { };
    /**
     * Start-overs workers reported and no rebuild has followed yet, by worker id: read here, kept in
     * {@link #marks} too (null: in this process's memory only) so that a master restart still shows them.
     */
    private final Map<Long, StartOverMark> startOvers = new ConcurrentSkipListMap<>();
    private final MembershipStore marks;
    /** Held while a worker's mark is written: each write takes the mark as it is then, so the last one is the newest. */
    private final Object persisting = new Object();

    /** Links of a master that makes no dedup calls of its own accord at registration. */
    public DedupLinks() {
        this(false);
    }

    /** As {@link #DedupLinks(boolean, MembershipStore)}, keeping start-overs in memory only. */
    public DedupLinks(boolean askOnRegister) {
        this(askOnRegister, null);
    }

    /**
     * {@code askOnRegister}: ask each worker for its load as soon as it registers, so its index size
     * (0 if it started its index over) is known before the first backup. Only for a master whose
     * engine is the workers' (holdfast.dedup.engine=cluster): the question opens a worker's engine.
     * {@code marks}: where the workers' index start-over marks are kept across restarts (read now);
     * null: in this process's memory only.
     */
    public DedupLinks(boolean askOnRegister, MembershipStore marks) {
        this.askOnRegister = askOnRegister;
        this.marks = marks;
        if (marks != null) {
            startOvers.putAll(marks.startOverMarks());
        }
    }

    /**
     * Calls {@code listener} with the id of every worker that registered so far and of each that
     * registers from now on (an id may come more than once): the master's per-worker metrics.
     */
    public void onRegistered(LongConsumer listener) {
        onRegistered = listener;
        newest.keySet().forEach(listener::accept);
    }

    void add(long workerId, DedupLink link) {
        newest.put(workerId, link);
        onRegistered.accept(workerId);
        if (askOnRegister) {
            link.askLoad();
        }
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
                up.put(id, new RemoteDedupWorker(up.size(), id, link));
            }
        });
        return up;
    }

    /**
     * What worker {@code workerId} last reported about its dedup index on its newest link (up or
     * ended), or null: before any registration, and after one until the master's first dedup call
     * is answered (a registration may have started the index over, so an older figure is not kept).
     */
    public IndexReport indexReport(long workerId) {
        DedupLink l = newest.get(workerId);
        return l == null ? null : l.indexReport();
    }

    /**
     * Notes that worker {@code workerId} started its index over (the newest report wins), in memory:
     * {@link #persist} then keeps it (not here: this runs on an event loop, and the write is synced).
     */
    void startedOver(long workerId, StartOverMark s) {
        startOvers.put(workerId, s);
    }

    /**
     * Writes worker {@code workerId}'s start-over mark as it stands now to the membership store: the
     * mark, or its deletion once a rebuild answered it. A failure is logged, not thrown: the mark
     * stays in memory and only a master restart would forget it.
     */
    void persist(long workerId) {
        if (marks == null) {
            return;
        }
        synchronized (persisting) {
            StartOverMark s = startOvers.get(workerId);
            try {
                if (s == null) {
                    marks.clearStartOverMark(workerId);
                } else {
                    marks.putStartOverMark(workerId, s);
                }
            } catch (RuntimeException e) {
                System.getLogger(DedupLinks.class.getName()).log(System.Logger.Level.WARNING, "could not " + (s == null
                        ? "delete worker " + workerId + "'s index start-over mark from the catalog: a master restart shows it again"
                        + " until the next rebuild of that worker succeeds"
                        : "keep worker " + workerId + "'s index start-over mark in the catalog: a master restart forgets it (the"
                        + " audit keeps cluster.worker.index-started-over); rebuild that worker's index all the same")
                        + " (" + e.getMessage() + ")");
            }
        }
    }

    /**
     * The start-over worker {@code workerId} reported last, unless a rebuild of its index finished
     * since; null if none is known to this master process.
     */
    public StartOverMark startedOver(long workerId) {
        return startOvers.get(workerId);
    }

    /**
     * A rebuild of worker {@code workerId}'s index that started at {@code startedAtMillis} (this
     * master's clock) finished: a start-over heard before it is answered; one heard later (during the
     * rebuild) stays. Compared by when the master heard it, not by the worker's clock.
     */
    void rebuilt(long workerId, long startedAtMillis) {
        if (startOvers.computeIfPresent(workerId, (id, s) -> s.receivedAtMillis() <= startedAtMillis ? null : s) == null) {
            persist(workerId); // answered (or there was none: deleting nothing is cheap and leaves no stale mark)
        }
    }

    /**
     * Worker {@code workerId} was removed (its id is never handed out again): its last link (and so its
     * last index report) and its start-over mark are dropped from memory, and the mark is deleted from
     * the membership store once more. The store deleted it with the worker's record already; this
     * delete undoes a write of the mark that the cluster lane made in between (a report heard just
     * before the worker's link ended), so a restart cannot bring it back.
     */
    public void removed(long workerId) {
        newest.remove(workerId);
        startOvers.remove(workerId);
        persist(workerId); // null now: a (synced) delete, under the lock that orders it after any pending write
    }

    /** Proxies for the links that are up now, numbered 0..n-1 in worker-id order. */
    public List<RemoteDedupWorker> workers() {
        return new ArrayList<>(upByWorkerId().values());
    }
}
