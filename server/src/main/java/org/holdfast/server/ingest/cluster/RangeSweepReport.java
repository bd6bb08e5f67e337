package org.holdfast.server.ingest.cluster;

import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.gc.sweep.SweepReport;

/**
 * What one sweep of a worker's PBN range saw and did. {@code askedNow}: the master's time (0: none);
 * {@code horizon}: the time expiries were compared against (the earlier of the master's and the
 * worker's clock, capped by the worker's grace guard); {@code chunksSkipped}: GMA chunks the skip
 * table let it pass; {@code bytesFreed}: data-log bytes the compaction after it gave back
 * ({@link GcSwept#UNKNOWN_BYTES} if none ran); {@code finishedAt}: by the worker's clock.
 */
public record RangeSweepReport(PbnRange range, long askedNow, long horizon, boolean dryRun, long chunksSkipped, SweepReport sweep,
                               long bytesFreed, long millis, long finishedAt) {

    /** This report as GC_SWEPT answers request {@code requestId}. */
    GcSwept toWire(long requestId) {
        return new GcSwept(requestId, dryRun ? org.holdfast.common.protocol.GcSweep.DRY_RUN : 0, horizon, sweep.chunksScanned(),
                chunksSkipped, sweep.freed(), sweep.reclaimable(), sweep.keptReferenced(), sweep.keptUnexpired(), sweep.keptPinned(),
                bytesFreed, millis);
    }

    /** An epoch millisecond as an ISO instant, or as it is if out of the calendar's range. */
    private static String instant(long millis) {
        try {
            return java.time.Instant.ofEpochMilli(millis).toString();
        } catch (java.time.DateTimeException e) {
            return millis + " ms";
        }
    }

    /** The log line of this sweep. */
    String describe() {
        return String.format("%s of PBNs %s as of %s (master asked %s): %d GMA chunks read, %d skipped, %d blocks %s; kept %d referenced,"
                + " %d unexpired, %d pinned, %d freed before; %s; %d ms", dryRun ? "dry-run range sweep" : "range sweep", range, instant(horizon),
                askedNow == 0 ? "no time" : instant(askedNow), sweep.chunksScanned(), chunksSkipped,
                dryRun ? sweep.reclaimable() : sweep.freed(), dryRun ? "reclaimable" : "freed", sweep.keptReferenced(),
                sweep.keptUnexpired(), sweep.keptPinned(), sweep.alreadyFreed(),
                bytesFreed == GcSwept.UNKNOWN_BYTES ? "no compaction" : "compaction gave back " + bytesFreed + " bytes", millis);
    }
}
