package org.holdfast.server.ingest.cluster;

import org.holdfast.common.protocol.SealedLogReport;

/** Where a master keeps its workers' sealed-log reports (cluster version 7): the catalog's records, before a commit's sync completes. */
@FunctionalInterface
public interface SealedLogRecorder {
    /** Keeps nothing (a master whose workers' ranges are read from no bucket). */
    SealedLogRecorder NONE = (worker, report) -> { };

    /** Records worker {@code worker}'s {@code report} durably, or throws (the sync then fails). */
    void record(long worker, SealedLogReport report);
}
