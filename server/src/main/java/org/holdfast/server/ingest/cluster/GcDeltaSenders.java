package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.gc.GcRouting;

/**
 * The master's carriers of distributed GC: one sender thread per worker that takes the worker's
 * entries from the outbox ({@link GcOutbox}) in delta id order and sends them through its link
 * ({@link RemoteGcDeltas}, from {@link GcDeltaLinks}) while the link is up, and deletes them once
 * the worker acknowledged them (the mark is cumulative: every entry at or below it goes). Also the
 * {@link GcRouting} the master's GC routes with: its own range and the registered workers' ranges.
 *
 * <p>Why the outbox and not the shares in memory: the outbox is what survives a master restart and
 * a worker that is down for days, so it is the one source; the GC only says "written"
 * ({@link #outboxWritten}), never waits, and the sender reads back what it sends.
 *
 * <p>Per link: the first entry sent is the first after the worker's answered mark (the highest
 * acknowledgement any of its links gave this process; 0 after a master start, when the worker
 * answers the replays with its mark and logs nothing), then every later one in order, at most
 * {@link #WINDOW} parts unacknowledged. A link that ends, a part not acknowledged in time
 * ({@link RangeWorkerLostException}) or a refusal ({@link RangeWorkerFailedException}: the worker
 * will refuse every later part until it restarts) stops the sending on that link; the next
 * registration starts again from the outbox. An entry written again below what this link sent (the
 * re-drive after a failure) is either acknowledged already, and deleted at the next pass, or in
 * flight, and deleted with its acknowledgement.
 *
 * <p>{@link #pending} is exact (a scan of the worker's keys): 0 means every share routed to the
 * worker so far is durably logged there, which is what a master must know before it asks the worker
 * to sweep (otherwise a committed increment may still be on its way).
 *
 * <p>{@link #after} is when the master ends a committed backup's session on a worker's guard: once
 * the worker acknowledged every entry its outbox held at the commit's release, so its GMA counts
 * the snapshot's blocks before their protection stops being tied to the session. While the worker
 * is down or refuses, the wait lasts (in memory, a few bytes per backup); the session ended on the
 * worker with its link anyway, and its range is not swept while deltas wait.
 */
public final class GcDeltaSenders implements GcRouting, RangeReferenceGuard.CountsDelivered, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GcDeltaSenders.class.getName());
    /** Parts in flight per worker: bounds what a reconnect resends and what waits on one slow fsync. */
    static final int WINDOW = 32;
    /** A sender with nothing to do checks its link this often (a new link also wakes it at once). */
    static final long IDLE_MILLIS = 1000;

    private final PbnRange ownRange;
    private final Supplier<List<WorkerView>> workers;
    private final GcDeltaLinks links;
    private final GcOutbox outbox;
    private final Map<Long, Sender> senders = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile boolean started;

    /**
     * Senders for the workers {@code workers} lists (the registry's), over {@code links}, from
     * {@code outbox}; the master's own range is {@code ownRange}. Call {@link #start} once the
     * GC is open (its re-drive may have written entries) and before or after the cluster port opens.
     */
    public GcDeltaSenders(PbnRange ownRange, Supplier<List<WorkerView>> workers, GcDeltaLinks links, GcOutbox outbox) {
        this.ownRange = ownRange;
        this.workers = workers;
        this.links = links;
        this.outbox = outbox;
        links.whenAdded(this::wake);
    }

    /** Starts a sender for every worker registered and every worker with entries waiting (one removed since, too). */
    public void start() {
        started = true;
        for (WorkerView w : workers.get()) {
            sender(w.workerId());
        }
        for (long w : outbox.workers()) {
            sender(w);
        }
    }

    /** True once {@link #start} ran: the master's GC routes through these senders (holdfast.cluster.data=workers). */
    public boolean started() {
        return started;
    }

    @Override
    public PbnRange ownRange() {
        return ownRange;
    }

    @Override
    public SortedMap<Long, PbnRange> workerRanges() {
        SortedMap<Long, PbnRange> out = new TreeMap<>();
        for (WorkerView w : workers.get()) {
            out.put(w.workerId(), w.range());
        }
        return out;
    }

    @Override
    public void outboxWritten(long workerId) {
        Sender s = sender(workerId);
        if (s != null) {
            s.written.incrementAndGet();
            s.wake();
        }
    }

    @Override
    public void after(PbnRange range, Runnable then) {
        long id = -1;
        for (WorkerView w : workers.get()) {
            if (w.range().equals(range)) {
                id = w.workerId();
            }
        }
        long last = id < 0 ? 0 : outbox.lastDeltaId(id);
        Sender s = last == 0 ? null : sender(id);
        if (s == null || !s.after(last, then)) {
            then.run(); // nothing routed to it waits (or the master stops, or the worker was removed)
        }
    }

    /** Worker {@code workerId}'s outbox entries not yet acknowledged (deleted); 0 means drained. */
    public long pending(long workerId) {
        return outbox.count(workerId);
    }

    /** Stops every sender (entries stay in the outbox for the next start); idempotent. */
    @Override
    public void close() {
        closed = true;
        for (Sender s : senders.values()) {
            s.wake();
        }
        for (Sender s : senders.values()) {
            try {
                s.thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void wake(long workerId) {
        Sender s = senders.get(workerId);
        if (s != null) {
            s.wake();
        }
    }

    private Sender sender(long workerId) {
        if (closed) {
            return null;
        }
        return senders.computeIfAbsent(workerId, id -> {
            Sender s = new Sender(id);
            s.thread.start();
            return s;
        });
    }

    /** Something to run once the worker acknowledged delta {@code deltaId}. */
    private record Waiter(long deltaId, Runnable then) {
    }

    /** What was sent on one link: its parts in flight, and whether the worker refused one. */
    private static final class Flight {
        final RemoteGcDeltas link;
        final AtomicInteger inFlight = new AtomicInteger();
        volatile String refused;
        long sentUpTo;

        Flight(RemoteGcDeltas link, long from) {
            this.link = link;
            this.sentUpTo = from;
        }
    }

    /** One worker's sender: its own thread, so a slow worker delays nobody else. */
    private final class Sender implements Runnable {
        final long workerId;
        final Thread thread;
        final AtomicInteger written = new AtomicInteger();
        private final Object signal = new Object();
        private boolean woken;
        /** Highest acknowledgement of any of this worker's links in this process. */
        private volatile long answered;
        private long deletedUpTo;
        private Flight flight;
        /** Operations routed to the worker while it had no link, and the count at which the backlog is logged next. */
        private long writtenWhileDown;
        private long logAt = 1;
        /** What waits for an acknowledgement: run once {@link #answered} reaches its delta id (under {@code signal}). */
        private final List<Waiter> waiters = new ArrayList<>();

        Sender(long workerId) {
            this.workerId = workerId;
            this.thread = new Thread(this, "holdfast-gc-deltas-w" + workerId);
            thread.setDaemon(true);
        }

        /** Queues {@code then} until the worker acknowledged delta {@code deltaId}; false if it has already (run it now). */
        boolean after(long deltaId, Runnable then) {
            synchronized (signal) {
                if (answered >= deltaId) {
                    return false;
                }
                waiters.add(new Waiter(deltaId, then));
                return true;
            }
        }

        /** Runs, outside the lock, what waited for the mark {@code m} or below. */
        private void acknowledged(long m) {
            List<Runnable> due = new ArrayList<>();
            synchronized (signal) {
                waiters.removeIf(w -> w.deltaId <= m && due.add(w.then));
            }
            for (Runnable r : due) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "ending a committed session on worker " + workerId + " failed: " + e);
                }
            }
        }

        void wake() {
            synchronized (signal) {
                woken = true;
                signal.notifyAll();
            }
        }

        @Override
        public void run() {
            while (!closed) {
                try {
                    if (!step()) {
                        idle();
                    }
                } catch (RuntimeException e) {
                    // the catalog failed (a full disk, a corrupt entry): the entries stay; try again later
                    LOG.log(System.Logger.Level.ERROR, "GC deltas for worker " + workerId + " cannot be read from or deleted in the"
                            + " master's outbox; they stay there and are tried again in " + IDLE_MILLIS + " ms (see the cause; free"
                            + " space if the disk is full)", e);
                    idle();
                }
            }
        }

        private void idle() {
            synchronized (signal) {
                if (!woken && !closed) {
                    try {
                        signal.wait(IDLE_MILLIS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        closed = true;
                    }
                }
                woken = false;
            }
        }

        /** One pass: delete what is acknowledged, then send what the window allows; false if there was nothing to do. */
        private boolean step() {
            int newlyWritten = written.getAndSet(0);
            long mark = answered;
            if (mark > deletedUpTo || (newlyWritten > 0 && mark > 0)) {
                outbox.deleteUpTo(workerId, mark); // also an entry written again below the mark (a re-drive)
                deletedUpTo = mark;
            }
            RemoteGcDeltas link = links.up(workerId);
            if (link == null) {
                backlog(newlyWritten);
                return false;
            }
            if (flight == null || flight.link != link) {
                if (writtenWhileDown > 0) {
                    LOG.log(System.Logger.Level.INFO, "worker {0} is connected again: sending the GC deltas that waited for it in"
                            + " the master''s outbox ({1} entries)", workerId, outbox.count(workerId));
                }
                flight = new Flight(link, mark);
                writtenWhileDown = 0;
                logAt = 1;
            }
            Flight f = flight;
            if (f.refused != null || f.inFlight.get() >= WINDOW) {
                return false; // a refusal waits for the next registration; a full window for acknowledgements
            }
            List<GcDelta> next = outbox.after(workerId, Math.max(f.sentUpTo, mark), WINDOW - f.inFlight.get());
            for (GcDelta d : next) {
                CompletableFuture<Void> acked;
                try {
                    acked = f.link.send(d);
                } catch (IllegalArgumentException e) {
                    // outside the worker's range (its range changed: a replaced or re-made worker) or out of order
                    f.refused = e.getMessage();
                    LOG.log(System.Logger.Level.ERROR, "GC delta " + d.deltaId() + " for worker " + workerId + " cannot be sent on"
                            + " its link: " + e.getMessage() + "; it and the later ones stay in the master's outbox until the worker"
                            + " registers again");
                    return false;
                }
                f.sentUpTo = d.deltaId();
                f.inFlight.incrementAndGet();
                acked.whenComplete((v, e) -> done(f, e));
            }
            return !next.isEmpty();
        }

        private void done(Flight f, Throwable e) {
            f.inFlight.decrementAndGet();
            if (e == null) {
                long m = f.link.appliedDeltaId();
                synchronized (signal) {
                    if (m > answered) {
                        answered = m;
                    }
                }
                acknowledged(answered);
            } else {
                Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                if (c instanceof RangeWorkerFailedException && f.refused == null) {
                    f.refused = c.getMessage();
                    LOG.log(System.Logger.Level.WARNING, c.getMessage() + "; its GC deltas wait in the master's outbox until it"
                            + " registers again: fix what its log names, then restart the worker");
                }
                // lost: the link is down; the next registration resends from the outbox
            }
            wake();
        }

        /** The worker has no link: log plainly when its backlog grows by a factor of ten. */
        private void backlog(int newlyWritten) {
            writtenWhileDown += newlyWritten;
            if (writtenWhileDown >= logAt) {
                logAt = writtenWhileDown * 10;
                LOG.log(System.Logger.Level.WARNING, "worker {0} is not connected: {1} GC deltas wait for it in the master''s outbox"
                        + " ({2} operations routed to it since its link went down). They are sent when it registers again;"
                        + " nothing is lost, but its range cannot be swept until they are. Start the worker, or replace a dead one"
                        + " (POST /api/v1/cluster/workers/{0}/replace)", Long.toString(workerId), outbox.count(workerId),
                        writtenWhileDown);
            }
        }
    }
}
