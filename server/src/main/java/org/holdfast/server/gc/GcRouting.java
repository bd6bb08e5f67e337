package org.holdfast.server.gc;

import java.util.SortedMap;
import org.holdfast.common.id.PbnRange;

/**
 * What a master's GC needs from the cluster to route its operations (distributed GC, thesis 7.2.4;
 * {@link RoutedBookkeeping}): the PBN ranges the updates are split over, and who carries each
 * worker's share once it is in the outbox. The GC sees no link or frame: the carrier (in
 * {@code ingest.cluster}) reads the outbox itself.
 */
public interface GcRouting {
    /** The master's own PBN range: the PBNs below the workers' first PBN. */
    PbnRange ownRange();

    /** Every worker that owns a PBN range now (lost ones included: their shares wait), by stable worker id. */
    SortedMap<Long, PbnRange> workerRanges();

    /** Entries for worker {@code workerId} are durably in the outbox: send them once its link allows. Must not block. */
    void outboxWritten(long workerId);
}
