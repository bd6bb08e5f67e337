package org.holdfast.server.ingest.cluster;

import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.common.protocol.SealedLogsPush;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LogArchive;

/**
 * An archiving worker's sealed-log reports between syncs on one link (cluster version 8, SEALED_LOGS):
 * asked at every heartbeat, it sends the link's next report ({@link SealedLogReporter}, shared with
 * DATA_SYNCED) once the archive's confirmed logs changed, and only if it tells the master something new;
 * one at a time, the next after the master's SEALED_LOGS_RECORDED. Nothing is persisted: the first
 * report on a link is full (everything confirmed uploaded), so a restart or a lost link loses no duty.
 * Lane thread only.
 */
final class SealedLogPush {
    private final SealedLogReporter reporter;
    private long seen = -1; // the archive's confirmedChanges at the last look; -1 none yet
    private long inFlight; // the request id of the report not yet acknowledged; 0 none
    private long lastId;

    /** Sends {@code reporter}'s reports. */
    SealedLogPush(SealedLogReporter reporter) {
        this.reporter = reporter;
    }

    /** The report to send now, or null: one is in flight, the archive's confirmed logs did not change, or nothing is new. */
    SealedLogsPush next(DataStore store) {
        LogArchive archive = store.archive();
        if (inFlight != 0 || archive == null) {
            return null;
        }
        long changes = archive.confirmedChanges(); // read first: a change while the report is made is looked at next time
        if (changes == seen) {
            return null;
        }
        SealedLogReport r = reporter.nextIfNew(store);
        seen = changes;
        if (r == null) {
            return null;
        }
        inFlight = ++lastId;
        return new SealedLogsPush(inFlight, r);
    }

    /** The master recorded report {@code requestId}; false if no such report is in flight (the master is confused: a protocol error). */
    boolean recorded(long requestId) {
        if (requestId == 0 || requestId != inFlight) {
            return false;
        }
        inFlight = 0;
        return true;
    }
}
