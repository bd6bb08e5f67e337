package org.holdfast.server.ingest.cluster;

import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.server.cluster.StartOverMark;

/**
 * A worker's report that it started its dedup index over at a registration ({@code atMillis}, the
 * worker's clock, epoch ms, but never after the master heard it) and why ({@code reason}:
 * {@link StartOverReason#apiName()}: {@code new-membership}, {@code other-worker-id}, {@code epoch-gap},
 * {@code unreadable-owner-file}),
 * heard by the master at {@code receivedAtMillis} (its own clock: what a rebuild is compared with):
 * duplicates of the blocks only it held are missed until its index is rebuilt
 * ({@code POST /api/v1/cluster/workers/{id}/rebuild}).
 */
public record IndexStartOver(long atMillis, String reason, long receivedAtMillis) {
    /** The report a DEDUP_DONE heard at {@code nowMillis} carries, or null; a time in the future is taken as now. */
    static IndexStartOver of(DedupDone d, long nowMillis) {
        if (!d.startedOver()) {
            return null;
        }
        return new IndexStartOver(Math.min(d.startedOverAtMillis(), nowMillis), StartOverReason.ofCode(d.startOverReason()).apiName(),
                nowMillis);
    }

    /** The report a master kept across a restart. */
    static IndexStartOver of(StartOverMark m) {
        return new IndexStartOver(m.atMillis(), m.reason().apiName(), m.receivedAtMillis());
    }

    /** This report as the membership store keeps it. */
    StartOverMark mark() {
        return new StartOverMark(atMillis, StartOverReason.ofApiName(reason), receivedAtMillis);
    }
}
