package org.holdfast.server.store;

/**
 * Whether this node may delete an object from the bucket now: a worker whose range another node
 * could take over (after its master declared it lost) deletes only while the master heard it
 * recently, so that a delete cannot land after a takeover listed the bucket (the worker's
 * MasterLease; docs/architecture.md "Delete lease").
 */
@FunctionalInterface
public interface DeleteLease {
    /** A node no other node can take over (no master, backend local, standalone): always free to delete. */
    DeleteLease NOT_NEEDED = () -> Long.MAX_VALUE;

    /**
     * How long from now (nanoseconds, monotonic) a delete started now may take and still end before
     * any takeover can list the bucket; zero or less: no delete may start.
     */
    long safeNanos();

    /**
     * As {@link #safeNanos()}, for a delete in worker {@code worker}'s key space: a lease a master
     * gave this node under another worker id says nothing of when that worker's range may be taken over.
     */
    default long safeNanos(long worker) {
        return safeNanos();
    }
}
