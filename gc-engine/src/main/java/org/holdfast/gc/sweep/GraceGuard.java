package org.holdfast.gc.sweep;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;

/**
 * Protects blocks that a backup in progress has written or matched as duplicates, before its
 * snapshot commits (design.md: "a PBN written, or matched as a duplicate, by a snapshot not yet
 * committed carries a grace expiry").
 *
 * <p>{@link #protect} logs ET = max(ET, now + grace) through BOSC, so the protection is durable and
 * survives a restart (a resumed backup is still covered). It is decided under a per-chunk lock
 * that the sweep also holds while it re-checks a chunk and chooses victims; a PBN the sweep has
 * chosen is tombstoned first, and {@link #protect} then answers false: the caller must treat the
 * block as a miss and store the data again. So a block is either protected before the sweep looks
 * (the sweep sees the raised ET after its barrier) or refused after.
 *
 * <p>{@link #protect(long, long[], int, int, boolean)} protects a whole batch (an input segment's
 * duplicates, a frame's new blocks) under the stripes of all its chunks, taken in ascending order
 * as the sweep takes them, with one append to the log instead of one per block.
 *
 * <p>Backups longer than the grace period: the protection is tied to the open session. A session
 * is registered (with the time of its first protection) before its first ET is raised, so every
 * PBN it protected has ET &ge; its start + grace. {@link #sweepHorizon} caps the sweep's "now" at the
 * oldest open session's start + grace: while a session lives, nothing it protected can look
 * expired, however long it runs; once it ends ({@link #sessionEnded}) its blocks are counted (commit)
 * or their grace simply runs out (abandon). The cost is reclaim delayed while a backup outlives
 * the grace, never a lost block.
 *
 * <p>Obligations of the caller: protect every PBN a session writes or matches, before using it in
 * a snapshot, and end the session when it commits or is abandoned; sweep with
 * {@link #sweepHorizon}; after a restart, re-protect the PBNs of a resumed session before the first
 * sweep. Tombstones live for {@code tombstoneLinger} after the reclaimer made the engine forget the
 * fingerprint, which covers a lookup already in flight.
 *
 * <h2>Freed slots stay refused</h2>
 * A tombstone is only in memory and lingers for minutes; an answer naming a freed PBN may come
 * later (a stale engine, a restart). So a PBN whose GMA slot is marked FREED is refused too, for
 * good: the sweep marks it before its tombstone starts to linger, and nothing clears the mark
 * (PBNs are never reused). The check reads the slot's flags from the chunk, cached or read once
 * per chunk of the batch, without applying its queue (no queued update changes FREED), under the
 * chunk lock, taken inside the stripes as the sweep takes it.
 *
 * <h2>Sessions seen by reclaim-now</h2>
 * Reclaim-now ({@link Sweeper#sweepUnmarked}) ignores expiries, so a grace expiry cannot protect
 * anything from it. Instead each open session keeps the set of PBNs it protected (a bitmap: 512 KiB
 * for each range of 4 Mi PBNs it touched, freed when the session ends), and a
 * {@link Watch} collects, from the moment it opens until it closes, every PBN that any session
 * protected before (still open) or protects after. A session that ended before the watch opened
 * has either committed (the catalog holds its snapshot, which the exact mark reads after the watch
 * opened) or been abandoned (nothing needs its blocks). A session that commits while the watch is
 * open stays covered by the watch even after it ended, which closes the race with a later commit
 * that dereferences its blocks. Recording and watching share one lock ({@code inFlight}), taken
 * inside the stripes, so a PBN is either in the watch before reclaim-now decides on its chunk or
 * refused by its tombstone after.
 */
public final class GraceGuard {
    private static final int STRIPES = 1024;

    private final BoscPipeline pipeline;
    private final Clock clock;
    private final Duration grace;
    private final Duration tombstoneLinger;
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];
    private final ConcurrentHashMap<Long, Long> tombstones = new ConcurrentHashMap<>();
    /** Open sessions: id to the time of their first protection and the PBNs they protected. */
    private final ConcurrentHashMap<Long, Session> sessions = new ConcurrentHashMap<>();
    /** Guards every {@link Session#record} and {@link #watch}; innermost lock, taken inside stripes. */
    private final Object inFlight = new Object();
    private LivePbns watch; // non-null while a Watch is open; guarded by inFlight

    /**
     * One open session: when it first protected a block, and every PBN it protected since, as a
     * bitmap (a session's new blocks are dense: 16 M of them take 2 MiB, not the 128 MiB of a list).
     */
    private static final class Session {
        final long start;
        final LivePbns pbns;

        Session(long start, long first) {
            this.start = start;
            this.pbns = new LivePbns(first);
        }

        /** Caller holds {@code inFlight}. */
        void record(long[] src, int off, int count) {
            pbns.addAll(src, off, count);
        }
    }

    /**
     * The PBNs sessions protected while it is open (see the class comment). At most one is open at a
     * time; close it when reclaim-now is done.
     */
    public final class Watch implements AutoCloseable {
        private boolean closed;

        private Watch() {
        }

        /**
         * Removes from {@code pbns[0..n)} every PBN a session protected, keeping the others in order,
         * and returns how many remain. Call with the stripes of their chunks held.
         */
        int dropProtected(long[] pbns, int n) {
            synchronized (inFlight) {
                int kept = 0;
                for (int i = 0; i < n; i++) {
                    if (!watch.contains(pbns[i])) {
                        pbns[kept++] = pbns[i];
                    }
                }
                return kept;
            }
        }

        /** PBNs in the watch so far (tests and logs). */
        public long size() {
            synchronized (inFlight) {
                return closed ? 0 : watch.count();
            }
        }

        @Override
        public void close() {
            synchronized (inFlight) {
                if (!closed) {
                    closed = true;
                    watch = null;
                }
            }
        }
    }

    public GraceGuard(BoscPipeline pipeline, Clock clock, Duration grace, Duration tombstoneLinger) {
        if (grace.isNegative() || grace.isZero()) {
            throw new IllegalArgumentException("grace period must be positive: " + grace);
        }
        this.pipeline = pipeline;
        this.clock = clock;
        this.grace = grace;
        this.tombstoneLinger = tombstoneLinger;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    public Duration grace() {
        return grace;
    }

    ReentrantLock stripe(long chunk) {
        return stripes[(int) Math.floorMod(chunk, (long) STRIPES)];
    }

    /**
     * Protects {@code pbn} for the grace period. Returns false if the sweep is freeing or has just
     * freed it: do not reference it. PBN 0 is always fine.
     */
    public boolean protect(long pbn) {
        if (pbn == 0) {
            return true;
        }
        ReentrantLock l = stripe(pipeline.layout().chunkOf(pbn));
        l.lock();
        try {
            if (tombstones.containsKey(pbn) || freedInGma(pbn)) {
                return false;
            }
            pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, pbn, clock.millis() + grace.toMillis());
            synchronized (inFlight) {
                if (watch != null) {
                    watch.add(pbn); // no session to tie it to: reclaim-now keeps it while the watch is open
                }
            }
            return true;
        } finally {
            l.unlock();
        }
    }

    /**
     * Protects {@code pbns[off..off+count)} for session {@code sessionId}, as one batch. Returns the
     * number of PBNs refused because the sweep is freeing or has just freed them; with
     * {@code zeroRefused} their entries are set to 0 (the caller stores those blocks anew), else
     * the array is left as it is and the caller must not reference any of them. PBN 0 is always fine.
     */
    public int protect(long sessionId, long[] pbns, int off, int count, boolean zeroRefused) {
        if (count <= 0) {
            return 0;
        }
        Session session = sessions.computeIfAbsent(sessionId, id -> new Session(clock.millis(), pipeline.layout().range().first()));
        return protectBatch(session, pbns, off, count, zeroRefused, clock.millis() + grace.toMillis(), true);
    }

    /**
     * Protects blocks just stored that no session has protected yet (a worker's DATA_STORE, whose
     * answer the master may never get): logs ET = max(ET, {@code at} + grace) for
     * {@code pbns[off..off+count)} under their stripes, tied to no session, so a sweep frees them
     * once the grace has passed unless a reference or a session's protection arrives first. The
     * caller caps the sweep's horizon while the master may still protect them (its answered stores,
     * {@code at} their time). Returns the number refused (tombstoned; nothing logged then).
     */
    public int protectStored(long[] pbns, int off, int count, long at) {
        // just appended: PBNs are never reused, so none is FREED, and reading its GMA chunk on the data lane would be wasted
        return count <= 0 ? 0 : protectBatch(null, pbns, off, count, false, at + grace.toMillis(), false);
    }

    /**
     * The batch protection of {@link #protect(long, long[], int, int, boolean)}, for {@code session} (null: none), raising ET
     * to {@code expiry}; with {@code checkFreed} a PBN the GMA marks FREED is refused too.
     */
    private int protectBatch(Session session, long[] pbns, int off, int count, boolean zeroRefused, long expiry, boolean checkFreed) {
        // the stripes of the batch, locked in ascending order (the sweep's order): no deadlock
        long[] wanted = new long[STRIPES / 64];
        boolean any = false;
        for (int i = off; i < off + count; i++) {
            if (pbns[i] != 0) {
                int s = Math.floorMod(pipeline.layout().chunkOf(pbns[i]), STRIPES);
                wanted[s >>> 6] |= 1L << (s & 63);
                any = true;
            }
        }
        if (!any) {
            return 0;
        }
        int refused = 0;
        int locked = 0;
        try {
            for (int w = 0; w < wanted.length; w++) {
                for (long bits = wanted[w]; bits != 0; bits &= bits - 1) {
                    stripes[(w << 6) + Long.numberOfTrailingZeros(bits)].lock();
                    locked++;
                }
            }
            // a tombstone is only ever added under its stripe, which we hold: empty now, empty for us
            if (!tombstones.isEmpty()) {
                for (int i = off; i < off + count; i++) {
                    if (pbns[i] != 0 && tombstones.containsKey(pbns[i])) {
                        refused++;
                        if (zeroRefused) {
                            pbns[i] = 0;
                        }
                    }
                }
            }
            if (checkFreed) {
                refused += refuseFreed(pbns, off, count, zeroRefused);
            }
            if (refused > 0 && !zeroRefused) {
                return refused;
            }
            pipeline.appendSingles(UpdateKinds.RAISE_EXPIRY, pbns, off, count, expiry);
            synchronized (inFlight) {
                if (session != null) {
                    session.record(pbns, off, count); // refused entries are 0 here
                }
                if (watch != null) {
                    watch.addAll(pbns, off, count);
                }
            }
            return refused;
        } finally {
            for (int w = 0; w < wanted.length && locked > 0; w++) {
                for (long bits = wanted[w]; bits != 0 && locked > 0; bits &= bits - 1) {
                    stripes[(w << 6) + Long.numberOfTrailingZeros(bits)].unlock();
                    locked--;
                }
            }
        }
    }

    /**
     * Counts the PBNs of {@code pbns[off..off+count)} whose GMA slot is FREED (and not already zeroed),
     * zeroing them with {@code zeroRefused}. One chunk lock and load per run of PBNs in one chunk; a
     * tombstoned PBN counted by the caller is skipped, so none is counted twice. Caller holds the stripes.
     */
    private int refuseFreed(long[] pbns, int off, int count, boolean zeroRefused) {
        int refused = 0;
        long held = -1;
        ReentrantLock lock = null;
        GmaChunk chunk = null;
        try {
            for (int i = off; i < off + count; i++) {
                long pbn = pbns[i];
                if (pbn == 0 || (!zeroRefused && !tombstones.isEmpty() && tombstones.containsKey(pbn))) {
                    continue;
                }
                long c = pipeline.layout().chunkOf(pbn);
                if (c != held) {
                    if (lock != null) {
                        lock.unlock();
                        lock = null;
                        chunk = null;
                        held = -1;
                    }
                    if (c >= pipeline.gma().chunkCount()) {
                        continue; // never written: nothing in it was ever freed
                    }
                    lock = pipeline.gma().lock(c);
                    lock.lock();
                    held = c;
                    chunk = pipeline.gma().load(c);
                }
                if (chunk.freed(pipeline.layout().slotOf(pbn))) {
                    refused++;
                    if (zeroRefused) {
                        pbns[i] = 0;
                    }
                }
            }
        } finally {
            if (lock != null) {
                lock.unlock();
            }
        }
        return refused;
    }

    /** True if the GMA marks {@code pbn} FREED. Caller holds its stripe. */
    private boolean freedInGma(long pbn) {
        long c = pipeline.layout().chunkOf(pbn);
        if (c >= pipeline.gma().chunkCount()) {
            return false;
        }
        ReentrantLock l = pipeline.gma().lock(c);
        l.lock();
        try {
            return pipeline.gma().load(c).freed(pipeline.layout().slotOf(pbn));
        } finally {
            l.unlock();
        }
    }

    /**
     * True if {@link #protect} refuses {@code pbn}: the sweep has chosen it (tombstoned) or the GMA
     * marks it FREED (for naming a refused block; racy by nature).
     */
    public boolean refuses(long pbn) {
        if (pbn == 0) {
            return false;
        }
        if (tombstones.containsKey(pbn)) {
            return true;
        }
        ReentrantLock l = stripe(pipeline.layout().chunkOf(pbn));
        l.lock();
        try {
            return freedInGma(pbn);
        } finally {
            l.unlock();
        }
    }

    /** Session {@code sessionId} committed or was abandoned: its protection is no longer tied to it. */
    public void sessionEnded(long sessionId) {
        synchronized (inFlight) {
            sessions.remove(sessionId); // an open watch keeps what it protected
        }
    }

    /**
     * Opens the watch reclaim-now needs (see the class comment), seeded with every PBN the open
     * sessions protected so far. Refused while another watch is open.
     */
    public Watch watch() {
        synchronized (inFlight) {
            if (watch != null) {
                throw new IllegalStateException("a reclaim-now watch is already open");
            }
            LivePbns w = new LivePbns(pipeline.layout().range().first());
            for (Session s : sessions.values()) {
                w.addAll(s.pbns);
            }
            watch = w;
            return new Watch();
        }
    }

    /** Sessions with protected blocks still open (tests and metrics). */
    public int openSessions() {
        return sessions.size();
    }

    /**
     * The time a sweep at {@code now} may treat as now: {@code now}, capped at the oldest open
     * session's start + grace, so no block an open session protected can look expired.
     */
    public long sweepHorizon(long now) {
        long h = now;
        for (Session s : sessions.values()) {
            h = Math.min(h, s.start + grace.toMillis());
        }
        return h;
    }

    /** Called by the sweep with the chunk's stripe held. */
    void tombstone(long pbn) {
        tombstones.put(pbn, Long.MAX_VALUE);
    }

    /**
     * The reclaimer is done with {@code pbn}: start its linger time. By this guard's clock, not the
     * sweep's horizon, which a long backup holds back: dated by the horizon, a tombstone could be
     * pruned by the next sweep moments after its reclaim.
     */
    void reclaimed(long pbn) {
        tombstones.replace(pbn, clock.millis());
    }

    /** Drops tombstones that have lingered their time, by this guard's clock. */
    void prune() {
        long limit = clock.millis() - tombstoneLinger.toMillis();
        tombstones.values().removeIf(t -> t < limit);
    }

    /** True if the sweep has chosen {@code pbn} (for error messages; racy by nature). */
    public boolean isTombstoned(long pbn) {
        return tombstones.containsKey(pbn);
    }

    /** Tombstones currently held (tests and metrics). */
    public int tombstones() {
        return tombstones.size();
    }
}
