package org.holdfast.server.gc;

import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.server.store.Compactor;

/**
 * Runs compaction of the sealed data logs below the threshold (a GC cycle's, or reclaim-now's
 * higher one) and counts what it did since the
 * server started (for metrics and status).
 *
 * <p>Lock: none of the GC's. The {@link Compactor} is safe while backups append, restores read and
 * a sweep frees blocks (the store re-checks every location it moves); the counters are atomics.
 */
final class CompactionCounters {
    private static final System.Logger LOG = System.getLogger(GcService.class.getName());

    private final Compactor compactor;
    private final double threshold;
    private final double reclaimThreshold;
    private final long maxBytes;
    private final AtomicLong runs = new AtomicLong();
    private final AtomicLong rewritten = new AtomicLong();
    private final AtomicLong deleted = new AtomicLong();
    private final AtomicLong copied = new AtomicLong();
    private final AtomicLong reclaimed = new AtomicLong();
    private final AtomicLong nanos = new AtomicLong();

    CompactionCounters(Compactor compactor, double threshold, double reclaimThreshold, long maxBytes) {
        this.compactor = compactor;
        this.threshold = threshold;
        this.reclaimThreshold = reclaimThreshold;
        this.maxBytes = maxBytes;
    }

    /** Compacts now at the cycle's threshold; null if compaction is off (threshold 0). */
    GcService.CompactionReport compact() {
        return compact(threshold);
    }

    /**
     * Compacts now at reclaim-now's threshold ({@code requested} if present, else the setting), or the
     * cycle's if that is higher: the operator asked for space, so logs a cycle leaves (mostly live,
     * with a failed backup's blocks in them) are rewritten too; null if compaction is off.
     */
    GcService.CompactionReport compactForReclaim(java.util.OptionalDouble requested) {
        return compact(threshold == 0 ? 0 : Math.max(threshold, requested.orElse(reclaimThreshold)));
    }

    private GcService.CompactionReport compact(double threshold) {
        if (threshold <= 0) {
            return null;
        }
        Compactor.Result r = compactor.run(threshold, maxBytes, true); // seals a sparse active log, so its garbage goes too
        runs.incrementAndGet();
        rewritten.addAndGet(r.logsRewritten());
        deleted.addAndGet(r.logsDeleted());
        copied.addAndGet(r.bytesCopied());
        reclaimed.addAndGet(r.bytesReclaimed());
        nanos.addAndGet(r.nanos());
        if (r.logsRewritten() + r.logsDeleted() + r.logsSkippedCorrupt() + r.logsTrimmed() > 0) {
            LOG.log(System.Logger.Level.INFO, () -> String.format("gc compaction: %d logs rewritten, %d deleted, %d deferred"
                    + " (%d of them trimmed), %d skipped (damaged), %d bytes copied, %d bytes reclaimed in %.3f s", r.logsRewritten(),
                    r.logsDeleted(), r.logsDeferred(), r.logsTrimmed(), r.logsSkippedCorrupt(), r.bytesCopied(), r.bytesReclaimed(),
                    r.nanos() / 1e9));
        }
        return GcService.CompactionReport.of(r, threshold);
    }

    /** Compaction since the service opened. */
    GcService.CompactionTotals totals() {
        return new GcService.CompactionTotals(runs.get(), rewritten.get(), deleted.get(), copied.get(), reclaimed.get(),
                nanos.get() / 1e9);
    }
}
