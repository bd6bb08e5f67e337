package org.holdfast.server.cluster;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The master's takeover rules per worker id: the {@link TakeoverFence} (highest archive epoch, PBN
 * floor; kept in the {@link MembershipStore}, only ever raised but by an admin's {@link #resetEpoch}),
 * when a node of the id was last heard and whether one said an archive epoch at REGISTER (both in
 * memory, for the {@link TakeoverWait}), a {@link TakeoverInProgress} (in memory), and the refusals they imply. Not thread-safe:
 * {@link WorkerRegistry} calls it under its lock, only for worker ids it knows, so its own checks
 * (connection, binding) come first.
 */
final class TakeoverGuard {
    private final MembershipStore store;
    private final Duration lostAfter;
    private final TakeoverWait takeoverWait;
    /** Whether the store keeps this run's {@code lost-after} as the longest told (else an earlier, longer one, not outwaited yet). */
    private boolean toldKept;
    private final Map<Long, Held> byId = new HashMap<>();

    /** What this guard holds for one worker id; kept across a replacement, as the id and range are. */
    private static final class Held {
        TakeoverFence fence = TakeoverFence.NONE;
        /** When the master last heard any node of this id, monotonic (0: not since it started). */
        long lastHeardNanos;
        /** The highest archive epoch a node of this id said at REGISTER since this master started (0: none). */
        long saidEpoch;
        /** A node of this id that began a takeover at REGISTER and has not ended it (null: none). */
        TakeoverInProgress takeover;
    }

    TakeoverGuard(MembershipStore store, Duration lostAfter, LongSupplier nanoTime) {
        this.store = store;
        this.lostAfter = lostAfter;
        Duration told = store.toldLostAfter();
        this.takeoverWait = new TakeoverWait(lostAfter, told, nanoTime);
        if (told == null || told.compareTo(lostAfter) < 0) {
            store.putToldLostAfter(lostAfter); // before any REGISTERED tells it
        }
        toldKept = told == null || told.compareTo(lostAfter) <= 0;
    }

    /** Takes worker {@code workerId}'s fence as the store kept it (at the master's start). */
    void restore(long workerId, TakeoverFence fence) {
        held(workerId).fence = fence;
    }

    /**
     * Refuses a known node registering as {@code r} (its record before this registration) whose range
     * data archives at {@code archiveEpoch}: unfenced (an older worker), taken over, the old node while
     * another takes the range over, or too early for a takeover, in that order. Changes nothing.
     */
    void refuseRegistration(WorkerRecord r, long archiveEpoch) {
        Held h = held(r.workerId());
        refuseUnfenced(r, h.fence, archiveEpoch);
        refuseTakenOver(r.workerId(), h.fence, archiveEpoch);
        if (h.takeover != null) {
            h.takeover.refuseOldNode(r.workerId(), archiveEpoch, h.lastHeardNanos, takeoverWait.now(), lostAfter);
        }
        // an epoch said at REGISTER counts too (not kept in the fence: it may be another id's directory, and here it only delays):
        // a node lost before its first serving report may have a delete lease from its REGISTER alone
        takeoverWait.refuseEarly(r.workerId(), archiveEpoch, h.saidEpoch >= 1 ? Math.max(1, h.fence.archiveEpoch())
                : h.fence.archiveEpoch(), h.lastHeardNanos);
    }

    /** A node of worker {@code workerId} registered now, saying {@code archiveEpoch}. */
    void registered(long workerId, long archiveEpoch) {
        if (!toldKept && takeoverWait.startOutwaited()) {
            store.putToldLostAfter(lostAfter); // the longer value an earlier run told is outwaited: no lease of it is left
            toldKept = true;
        }
        Held h = held(workerId);
        h.lastHeardNanos = takeoverWait.now();
        long heard = Math.max(h.fence.archiveEpoch(), h.saidEpoch);
        // empty range data over a range heard archived: a takeover (the TakeoverWait let it through); anything else ends one
        h.takeover = archiveEpoch == 0 && heard >= 1 ? TakeoverInProgress.began(heard) : null;
        h.saidEpoch = Math.max(h.saidEpoch, archiveEpoch);
    }

    /** Worker {@code workerId}'s current node reported its store serving (a taker claimed) or refused: a takeover in progress ended. */
    void takeoverEnded(long workerId) {
        held(workerId).takeover = null;
    }

    /** The master heard a node of worker {@code workerId} now. */
    void heard(long workerId) {
        held(workerId).lastHeardNanos = takeoverWait.now();
    }

    /**
     * Refuses a node that cannot be fenced ({@code archiveEpoch} negative: an older worker) once a fence
     * is known for {@code r}'s worker id (an epoch, or PBNs heard handed out: blocks on the workers): it
     * could be a stale node after a takeover, or hand out PBNs below the floor the master heard.
     */
    private static void refuseUnfenced(WorkerRecord r, TakeoverFence fence, long archiveEpoch) {
        // a floor at the range's first is what every report of an empty store says (blocks on the master): no fence
        if (archiveEpoch < 0 && (fence.archiveEpoch() > 0 || fence.pbnFloor() > r.range().first())) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.UNFENCED_VERSION, "worker "
                    + r.workerId() + " keeps blocks on its node, and this master fences its nodes (takeover epoch "
                    + fence.archiveEpoch() + ", PBNs heard up to " + Math.max(0, fence.pbnFloor() - 1) + "), which needs cluster"
                    + " protocol version 5; node " + r.nodeName() + " speaks an older one (it reports no takeover epoch and"
                    + " takes no PBN floor, so it could serve a range another node took over or name two blocks with one PBN):"
                    + " upgrade the worker to the master's release (docs/operations.md, \"Upgrading a cluster\")");
        }
    }

    /** Refuses a node of worker {@code workerId} whose range data archives below the highest epoch heard for it. */
    void refuseTakenOver(long workerId, long archiveEpoch) {
        refuseTakenOver(workerId, fence(workerId), archiveEpoch);
    }

    private static void refuseTakenOver(long id, TakeoverFence fence, long archiveEpoch) {
        if (archiveEpoch >= 1 && archiveEpoch < fence.archiveEpoch()) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.TAKEN_OVER, "worker " + id + " was taken over"
                    + " at epoch " + fence.archiveEpoch() + " by another node; this node's range-data archives at epoch " + archiveEpoch
                    + " and is stale (what it would write nobody reads, and its PBNs may be handed out again): stop this node and move"
                    + " its <data-dir>/range-data away (started on an empty one it takes the range over at the next epoch), or give it"
                    + " another node name; docs/operations.md \"Replace a dead worker whose range is in the bucket\"");
        }
    }

    /** Raises worker {@code workerId}'s fence and stores it if it rose (synced if the archive epoch did). */
    void raise(long workerId, long archiveEpoch, long pbnFloor) {
        Held h = held(workerId);
        TakeoverFence f = h.fence.raisedTo(archiveEpoch, pbnFloor);
        if (!f.equals(h.fence)) {
            store.putTakeoverFence(workerId, f, f.archiveEpoch() != h.fence.archiveEpoch());
            h.fence = f;
        }
    }

    /**
     * Drops worker {@code workerId}'s archive epoch (an admin bringing an older node back on purpose),
     * if it is {@code confirmedEpoch}; the PBN floor stays, so no PBN heard handed out is handed out
     * again. Stored synced before this returns.
     *
     * @return the fence before the reset
     * @throws FenceResetRefusedException if the fence holds no epoch, or another one; nothing changes then
     */
    TakeoverFence resetEpoch(long workerId, long confirmedEpoch) {
        Held h = held(workerId);
        TakeoverFence old = h.fence;
        if (old.archiveEpoch() == 0) {
            throw new FenceResetRefusedException("worker " + workerId + " has no takeover fence (no node of it reported its range"
                    + " archived at an epoch): nothing to reset, and any node of it may register");
        }
        if (old.archiveEpoch() != confirmedEpoch) {
            // a console open since before another takeover must not drop the newer fence
            throw new FenceResetRefusedException("worker " + workerId + "'s takeover fence is at epoch " + old.archiveEpoch()
                    + ", not " + confirmedEpoch + " as confirmed: it changed since you looked, or the confirmation is mistyped;"
                    + " read GET /api/v1/cluster/workers again and confirm the takeoverEpoch it shows");
        }
        TakeoverFence f = new TakeoverFence(0, old.pbnFloor());
        store.putTakeoverFence(workerId, f, true);
        h.fence = f;
        return old;
    }

    /** What the master heard of worker {@code workerId}'s range ({@link TakeoverFence#NONE} if nothing). */
    TakeoverFence fence(long workerId) {
        Held h = byId.get(workerId);
        return h == null ? TakeoverFence.NONE : h.fence;
    }

    /** Worker {@code workerId} was removed (its stored fence with it): nothing is held for it any more. */
    void forget(long workerId) {
        byId.remove(workerId);
    }

    private Held held(long workerId) {
        return byId.computeIfAbsent(workerId, id -> new Held());
    }
}
