package org.holdfast.server.ingest.cluster;

import java.time.Duration;
import org.holdfast.server.store.DeleteLease;

/**
 * A worker's lease on bucket deletes: held while the newest message the master acknowledged
 * (REGISTER or a heartbeat) was sent less than {@code lost-after / 2} ago, by this node's monotonic
 * clock.
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
    private final long lostAfterNanos;
    // System.nanoTime of sending the newest message the master acknowledged; valid only once heard is true
    private volatile long sentNanos;
    private volatile boolean heard;

    /** A lease for a cluster whose master declares a worker lost after {@code lostAfter} of silence. */
    public MasterLease(Duration lostAfter) {
        if (lostAfter.isNegative() || lostAfter.isZero()) {
            throw new IllegalArgumentException("holdfast.cluster.lost-after must be positive, got " + lostAfter);
        }
        this.lostAfterNanos = lostAfter.toNanos();
    }

    /** The master acknowledged a message this node sent at {@code sentNanos} ({@link System#nanoTime}). */
    public synchronized void heard(long sentNanos) {
        if (!heard || sentNanos - this.sentNanos > 0) {
            this.sentNanos = sentNanos;
            heard = true;
        }
    }

    @Override
    public long safeNanos() {
        if (!heard) {
            return 0;
        }
        long age = System.nanoTime() - sentNanos;
        return age < lostAfterNanos / 2 ? lostAfterNanos - age : 0;
    }
}
