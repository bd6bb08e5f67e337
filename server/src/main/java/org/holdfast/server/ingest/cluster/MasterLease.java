package org.holdfast.server.ingest.cluster;

import java.time.Duration;
import org.holdfast.server.store.DeleteLease;

/**
 * A worker's lease on bucket deletes: held while the newest message the master acknowledged
 * (REGISTER or a heartbeat) was sent less than {@code lost-after / 2} ago, by this node's monotonic
 * clock. {@code lost-after} is the smaller of this node's and the one the master's REGISTERED names
 * (cluster version 5), since the master's is what its takeover wait uses.
 *
 * <p>Why that makes a delete precede any takeover listing: the master lets another node take the
 * range over only once it declared this worker lost, i.e. after {@code lost-after} without hearing
 * it. A message sent at {@code t} and acknowledged was heard at or after {@code t}, so no takeover
 * can list the bucket before {@code t + lost-after}. A delete starts only before
 * {@code t + lost-after / 2}, and {@link #safeNanos} tells it how long it may take (up to
 * {@code t + lost-after}); the half left over covers clock rate differences and the request's way to
 * the bucket. The delete keeps its synced intent until it succeeded, so one refused here is only
 * deferred: the next compaction run or start carries it out with a lease.
 */
public final class MasterLease implements DeleteLease {
    private static final System.Logger LOG = System.getLogger(MasterLease.class.getName());
    private final long ownLostAfterNanos;
    // min(own, the master's as its latest REGISTERED said): a larger own value would outlive the master's takeover wait
    private volatile long lostAfterNanos;
    // the master's lost-after last warned about, so that a reconnect loop does not repeat the warning
    private long warnedMasterNanos = -1;
    // System.nanoTime of sending the newest message the master acknowledged; valid only once heard is true
    private volatile long sentNanos;
    private volatile boolean heard;
    // the worker id of the newest REGISTERED (0: none told): the master's acknowledgements hold off takeovers of that id only
    private volatile long workerId;

    /** A lease for a cluster whose master declares a worker lost after {@code lostAfter} of silence (this node's setting). */
    public MasterLease(Duration lostAfter) {
        if (lostAfter.isNegative() || lostAfter.isZero()) {
            throw new IllegalArgumentException("holdfast.cluster.lost-after must be positive, got " + lostAfter);
        }
        this.ownLostAfterNanos = lostAfter.toNanos();
        this.lostAfterNanos = ownLostAfterNanos;
    }

    /**
     * The master's lost-after as its REGISTERED says, or null (a master before cluster version 5 does not say):
     * the lease runs on the smaller of it and this node's own; with null on this node's own.
     */
    public synchronized void masterLostAfter(Duration master) {
        if (master == null) {
            lostAfterNanos = ownLostAfterNanos;
            return;
        }
        long m = master.toNanos();
        lostAfterNanos = Math.min(ownLostAfterNanos, m);
        if (m != ownLostAfterNanos && m != warnedMasterNanos) {
            LOG.log(System.Logger.Level.WARNING, "holdfast.cluster.lost-after differs: the master''s is {0}, this worker''s {1}; the"
                    + " delete lease uses the smaller, {2}. Set the same value on master and workers",
                    master, Duration.ofNanos(ownLostAfterNanos), Duration.ofNanos(lostAfterNanos));
        }
        warnedMasterNanos = m;
    }

    /** The lost-after the lease runs on now. */
    public Duration lostAfter() {
        return Duration.ofNanos(lostAfterNanos);
    }

    /**
     * The master registered this node as worker {@code id} in answer to a REGISTER sent at
     * {@code sentNanos}. Registered as another id than before (its node name given to another
     * worker meanwhile), the lease starts anew for that id: the master's takeover wait for the
     * former id never hears this node again, so acknowledgements now hold no lease over that id's range.
     */
    public synchronized void registered(long id, long sentNanos) {
        if (id != workerId) {
            workerId = id;
            heard = false;
        }
        heard(sentNanos);
    }

    /** The master acknowledged a message this node sent at {@code sentNanos} ({@link System#nanoTime}). */
    public synchronized void heard(long sentNanos) {
        if (!heard || sentNanos - this.sentNanos > 0) {
            this.sentNanos = sentNanos;
            heard = true;
        }
    }

    /** As {@link #safeNanos()} for a delete in worker {@code worker}'s key space: none unless this node is registered as it. */
    @Override
    public long safeNanos(long worker) {
        long id = workerId;
        return id == 0 || id == worker ? safeNanos() : 0;
    }

    @Override
    public long safeNanos() {
        if (!heard) {
            return 0;
        }
        long lostAfter = lostAfterNanos;
        long age = System.nanoTime() - sentNanos;
        return age < lostAfter / 2 ? lostAfter - age : 0;
    }
}
