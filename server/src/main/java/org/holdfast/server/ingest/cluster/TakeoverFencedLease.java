package org.holdfast.server.ingest.cluster;

import org.holdfast.server.store.DeleteLease;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;

/**
 * A delete lease that also checks the takeover fence: no delete while the bucket holds the marker
 * of the next epoch of this node's range (another node took it over). Defense in depth behind
 * {@link MasterLease}: one HEAD per delete, and a takeover after the HEAD is what the lease covers.
 */
final class TakeoverFencedLease implements DeleteLease {
    private final DeleteLease lease;
    private final ObjectStore objects;
    private final long worker;
    private final String nextMarker;

    /** {@code lease}, and no delete once worker {@code worker}'s range has a marker past {@code epoch} in {@code objects}. */
    TakeoverFencedLease(DeleteLease lease, long worker, long epoch, ObjectStore objects) {
        this.lease = lease;
        this.objects = objects;
        this.worker = worker;
        this.nextMarker = WorkerKeys.marker(worker, Math.max(epoch, 1) + 1);
    }

    @Override
    public long safeNanos() {
        long safe = lease.safeNanos(worker); // first: the time the HEAD takes counts against it
        if (safe <= 0) {
            return safe;
        }
        try {
            // a takeover writes the next epoch's marker before anything else, so any newer epoch starts with this one
            return objects.size(nextMarker).isPresent() ? 0 : safe;
        } catch (RuntimeException e) {
            return 0; // the bucket cannot tell: the delete would not get through either; the intent waits
        }
    }
}
