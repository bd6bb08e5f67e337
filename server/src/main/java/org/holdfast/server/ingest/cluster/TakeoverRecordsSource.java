package org.holdfast.server.ingest.cluster;

import org.holdfast.common.protocol.TakeoverRecords;
import org.holdfast.common.protocol.TakeoverRecordsPart;

/** Where a master answers TAKEOVER_RECORDS (cluster version 7) from: its records of a worker's sealed logs. */
@FunctionalInterface
public interface TakeoverRecordsSource {
    /** Holds no record of any worker (a master whose workers' ranges are read from no bucket). */
    TakeoverRecordsSource NONE = (worker, q) -> TakeoverRecordsPart.none(q.requestId());

    /** The part of worker {@code worker}'s records that answers {@code q}. */
    TakeoverRecordsPart answer(long worker, TakeoverRecords q);
}
