package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.gc.ReclaimedBlockException;
import org.holdfast.server.store.BlocksUnavailableException;

/**
 * The master's {@link ReferenceGuard} when blocks live on workers ({@code holdfast.cluster.data=workers},
 * distributed GC): each worker decides what of its PBN range is freed, so a PBN a backup in progress
 * relies on is protected by the guard of its owner. Each call's PBNs are split by range: the
 * master's own range goes to {@code local} (the master's {@code GcReferenceGuard} when its GC keeps
 * counts, else {@link ReferenceGuard#NONE}), each worker's to its {@link RemoteGcGuard} (at most
 * {@link ProtocolLimits#MAX_GC_PROTECT_PBNS} per GC_PROTECT), all sent before any answer is awaited.
 * A PBN in no known range, or whose worker is not connected, fails the call, but only once the
 * connected workers' shares are protected: a store a worker answered that no session protects holds
 * back that worker's sweep while its link lives ({@link AnsweredStores}).
 *
 * <ul>
 *   <li>{@link #protect} (the blocks a session stored): any refusal fails with
 *       {@link ReclaimedBlockException} naming a refused PBN. Each owner's share is all or nothing,
 *       the call as a whole is not: other owners may have raised their blocks' expiry, which only
 *       keeps them for the grace; the session fails and ends.</li>
 *   <li>{@link #protectOrRefuse} (duplicates): exactly the refused entries are set to 0 and
 *       counted; the ingest stores those blocks anew.</li>
 *   <li>A worker that is lost or refuses (GC_GUARD_FAILED) fails the call with
 *       {@link BlocksUnavailableException}, which the ingest handles as a lost dedup worker: the
 *       backup stops, nothing committed. So does a later call of a session that protected blocks
 *       on a link that has ended since: that worker ended the session with its link, so the
 *       protection of those blocks is no longer tied to it (their expiry still holds for the grace).
 *       A session that makes no such call is caught by the sweep instead: while it is open, that
 *       worker is not swept ({@link #heldByEndedLinks}, asked by {@link WorkerSweeps}).</li>
 *   <li>{@link #release} ends the session on the local guard and sends GC_SESSION_END to every
 *       worker link the session protected blocks on: at once for an abandoned session, but for a
 *       committed one only once that worker acknowledged the GC deltas routed to it by then
 *       ({@link CountsDelivered}). The commit's RC+1 reaches the worker later than the commit,
 *       through the outbox; ended before it arrives, the session would leave its blocks held by
 *       their expiry alone (protection time + grace), which a backup longer than the grace has
 *       outlived, and a sweep in between frees blocks of a committed snapshot.</li>
 *   <li>{@link #counted} of a worker's PBN is false: the master holds no counts of a worker's range
 *       (its GC metadata is on the worker). The ingest asks it of a bad block whose dedup domain is
 *       not recorded, to decide whether to repair it in place; false makes it store the block anew
 *       and leave the bad one alone, which costs space and is never wrong. A PBN of the master's
 *       own range is the local guard's answer.</li>
 * </ul>
 *
 * <p>Threads: the ingest calls this on its session threads (a {@code SerialExecutor} per agent
 * connection on a shared pool, never an event loop: the event loop only decodes and encodes), which
 * may block, as they do for the data calls of {@link WorkerBlockHome}. The wait is bounded: every
 * call on a worker link completes, or fails as lost, within {@code holdfast.cluster.lost-after}
 * ({@link PendingCalls}), and the answers arrive on the cluster port's own event loop, not the
 * caller's thread. Thread-safe: sessions of different volumes call at once.
 */
public final class RangeReferenceGuard implements ReferenceGuard {
    private final PbnRange own;
    private final ReferenceGuard local;
    private final GcGuardLinks workers;
    private final CountsDelivered delivered;
    /** Per open session, the worker links it protected blocks on (to end it there, and to notice a link that ended). */
    private final Map<Long, Set<RemoteGcGuard>> sessions = new ConcurrentHashMap<>();
    /**
     * Per committed session released, the worker links whose end of it waits for {@link CountsDelivered}:
     * still held ({@link #heldByEndedLinks}) until its counts are there, since while GC bookkeeping is
     * paused the commit's RC+1 is in no outbox, and a drained outbox then says nothing about it.
     */
    private final Map<Long, Set<RemoteGcGuard>> delivering = new ConcurrentHashMap<>();

    /** When a committed session may end on a worker: once that worker holds the commit's counts. */
    @FunctionalInterface
    public interface CountsDelivered {
        /** At once: for a guard whose commits route no counts to the workers (tests of the guard alone). */
        CountsDelivered AT_ONCE = (range, then) -> then.run();

        /**
         * Runs {@code then} once the owner of {@code range} acknowledged every GC delta routed to it so
         * far (at once if none waits); on any thread.
         */
        void after(PbnRange range, Runnable then);
    }

    /**
     * PBNs in {@code own} (the master's range: below the workers' first PBN) go to {@code local};
     * every other one to its owner among {@code workers} ({@link ClusterServer#gcGuards()}).
     */
    public RangeReferenceGuard(PbnRange own, ReferenceGuard local, GcGuardLinks workers) {
        this(own, local, workers, CountsDelivered.AT_ONCE);
    }

    /** As above, ending a committed session on a worker only once {@code delivered} says its counts are there. */
    public RangeReferenceGuard(PbnRange own, ReferenceGuard local, GcGuardLinks workers, CountsDelivered delivered) {
        this.own = own;
        this.local = local;
        this.workers = workers;
        this.delivered = delivered;
    }

    @Override
    public void protect(long sessionId, long[] pbns, int off, int count) {
        protect(sessionId, pbns, off, count, false);
    }

    @Override
    public int protectOrRefuse(long sessionId, long[] pbns, int off, int count) {
        return protect(sessionId, pbns, off, count, true);
    }

    /** One owner's share of a call: the positions (in the caller's array) of its PBNs. */
    private static final class Share {
        int[] at = new int[16];
        int n;

        void add(int i) {
            if (n == at.length) {
                at = Arrays.copyOf(at, n * 2);
            }
            at[n++] = i;
        }

        long[] pbns(long[] from) {
            long[] p = new long[n];
            for (int k = 0; k < n; k++) {
                p[k] = from[at[k]];
            }
            return p;
        }
    }

    private int protect(long sessionId, long[] pbns, int off, int count, boolean zeroRefused) {
        Share mine = new Share();
        Map<RemoteGcGuard, Share> theirs = new IdentityHashMap<>();
        // thrown once the connected workers' shares are protected: a worker's stores a session never protects hold back its
        // sweep while their link lives (AnsweredStores), and a failed session never calls again for them
        BlocksUnavailableException failed = null;
        for (int i = off; i < off + count; i++) {
            long p = pbns[i];
            if (p == 0) {
                continue; // the zero block: nobody's to protect
            }
            if (own.contains(p)) {
                mine.add(i);
                continue;
            }
            RemoteGcGuard owner = workers.owner(p);
            if (owner == null || !owner.isUp()) { // null: the link ended (its guard is gone), or no worker's range
                failed = failed != null ? failed : notConnected(p, owner == null ? "" : " (" + owner.name() + ", PBNs " + owner.range() + ")");
                continue;
            }
            theirs.computeIfAbsent(owner, o -> new Share()).add(i);
        }
        Set<RemoteGcGuard> before = sessions.get(sessionId);
        if (before != null && failed == null) {
            for (RemoteGcGuard g : before) {
                if (!g.isUp()) {
                    failed = new BlocksUnavailableException("the link to worker " + g.name() + " (PBNs " + g.range() + ") ended after"
                            + " this backup protected blocks on it; the worker ended the backup's protection with it, so nothing of the"
                            + " backup is committed: run it again once the worker registers (GET /api/v1/cluster)", null);
                    break;
                }
            }
        }
        if (!theirs.isEmpty()) {
            // before sending: a session whose call fails half way still ends on every worker it may have reached
            sessions.computeIfAbsent(sessionId, s -> ConcurrentHashMap.newKeySet()).addAll(theirs.keySet());
        }
        List<Sent> sent = new ArrayList<>();
        for (Map.Entry<RemoteGcGuard, Share> e : theirs.entrySet()) {
            Share s = e.getValue();
            long[] p = s.pbns(pbns);
            for (int from = 0; from < s.n; from += ProtocolLimits.MAX_GC_PROTECT_PBNS) {
                int n = Math.min(ProtocolLimits.MAX_GC_PROTECT_PBNS, s.n - from);
                sent.add(new Sent(e.getKey(), s, from, e.getKey().protect(sessionId, p, from, n, zeroRefused)));
            }
        }
        int refused = 0;
        long firstRefused = 0;
        if (mine.n > 0) {
            long[] p = mine.pbns(pbns);
            if (zeroRefused) {
                refused += local.protectOrRefuse(sessionId, p, 0, mine.n);
                for (int k = 0; k < mine.n; k++) {
                    pbns[mine.at[k]] = p[k]; // the refused ones are 0 now
                }
            } else {
                local.protect(sessionId, p, 0, mine.n); // a refusal throws ReclaimedBlockException naming the PBN
            }
        }
        for (Sent s : sent) {
            int[] entries = s.await();
            for (int e : entries) {
                int at = s.share.at[s.from + e];
                if (firstRefused == 0) {
                    firstRefused = pbns[at];
                }
                if (zeroRefused) {
                    pbns[at] = 0;
                }
            }
            refused += entries.length;
        }
        if (failed != null) {
            throw failed;
        }
        if (!zeroRefused && firstRefused != 0) {
            throw new ReclaimedBlockException(firstRefused);
        }
        return refused;
    }

    private static BlocksUnavailableException notConnected(long pbn, String worker) {
        return new BlocksUnavailableException("PBN " + pbn + " lives on a worker that is not connected" + worker + ", so it cannot be"
                + " protected for this backup; nothing of it is committed: run it again once the worker registers (GET /api/v1/cluster)",
                null);
    }

    /** One GC_PROTECT in flight: entries {@code from ..} of {@code share} on {@code guard}. */
    private record Sent(RemoteGcGuard guard, Share share, int from, CompletableFuture<int[]> answer) {
        /** The refused entries, relative to {@code from}; a lost or refusing worker as BlocksUnavailableException. */
        int[] await() {
            try {
                return answer.join(); // bounded: the call fails as lost after holdfast.cluster.lost-after
            } catch (CompletionException e) {
                Throwable c = e.getCause() == null ? e : e.getCause();
                throw new BlocksUnavailableException(PendingCalls.reason(c) + " (holdfast.cluster.data=workers); nothing of a backup in"
                        + " progress is committed, run it again once the worker is back", c);
            }
        }
    }

    /** The master's own range: its local guard's count; a worker's PBN: false (see the class comment). */
    @Override
    public boolean counted(long pbn) {
        return own.contains(pbn) && local.counted(pbn);
    }

    @Override
    public void release(long sessionId, boolean committed) {
        try {
            local.release(sessionId, committed);
        } finally {
            Set<RemoteGcGuard> open = sessions.get(sessionId);
            if (open != null && committed) {
                // held until its counts are delivered, and moved there before it leaves the open ones: no check sees a gap
                Set<RemoteGcGuard> waiting = ConcurrentHashMap.newKeySet();
                waiting.addAll(open);
                delivering.put(sessionId, waiting);
            }
            Set<RemoteGcGuard> on = sessions.remove(sessionId);
            if (on != null) {
                for (RemoteGcGuard g : on) {
                    // a link that ended has ended the session on its worker already
                    if (committed) {
                        delivered.after(g.range(), () -> { // the session holds the blocks until their counts arrive
                            delivered(sessionId, g);
                            g.sessionEnd(sessionId);
                        });
                    } else {
                        g.sessionEnd(sessionId);
                    }
                }
            }
        }
    }

    /**
     * Open sessions (not yet released) that protected blocks of {@code range} (a worker's) over a link
     * that has ended since: that worker ended them with the link, so nothing there holds its sweep
     * horizon back for them any more, while the master may still commit them. A committed session
     * counts until {@link CountsDelivered} says its counts are on the worker: while GC bookkeeping is
     * paused its RC+1 is in no outbox, so the outbox read after this check cannot stand in for it. {@link WorkerSweeps}
     * does not sweep the range until this is 0 (see there for why the order of its checks matters). A
     * link counts as ended once it is down, or no longer the registered one for its range (removed
     * or superseded by a new registration, which may happen before the old channel closes). Reads a
     * few entries per open session; thread-safe.
     */
    public int heldByEndedLinks(PbnRange range) {
        // the open ones first: release adds a committed session to the delivering ones before it removes it
        // from the open ones, so a check reading in this order sees it at least once
        int open = heldByEndedLinks(sessions, range);
        return open + heldByEndedLinks(delivering, range);
    }

    private int heldByEndedLinks(Map<Long, Set<RemoteGcGuard>> of, PbnRange range) {
        int held = 0;
        for (Set<RemoteGcGuard> on : of.values()) {
            for (RemoteGcGuard g : on) {
                if (g.range().overlaps(range) && (!g.isUp() || workers.owner(g.range().first()) != g)) {
                    held++;
                    break;
                }
            }
        }
        return held;
    }

    /** Committed session {@code sessionId}'s counts are on {@code g}'s worker: it no longer holds that worker's sweep. */
    private void delivered(long sessionId, RemoteGcGuard g) {
        delivering.computeIfPresent(sessionId, (id, waiting) -> {
            waiting.remove(g);
            return waiting.isEmpty() ? null : waiting;
        });
    }

    /** Sessions with blocks protected on a worker, not yet released (tests). */
    int openSessions() {
        return sessions.size();
    }
}
