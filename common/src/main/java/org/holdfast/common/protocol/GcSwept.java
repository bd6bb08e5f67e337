package org.holdfast.common.protocol;

/**
 * GC_SWEPT (0x5C), worker to master: the sweep GC_SWEEP {@code requestId} asked for is done.
 * {@code horizon}: the time (epoch ms) expiries were compared against, after the worker's clock and
 * grace guard capped the master's; GMA chunks read and skipped; blocks freed (made unknown to the
 * worker's dedup engine, then their locations deleted; 0 in a dry run) and reclaimable (what met
 * every condition); why used blocks were kept; data-log bytes the compaction after the sweep gave
 * back ({@link #UNKNOWN_BYTES} if none ran: a dry run, compaction off or failed); the sweep's time.
 */
public record GcSwept(long requestId, int flags, long horizon, long chunksVisited, long chunksSkipped, long blocksFreed,
                      long reclaimable, long keptReferenced, long keptUnexpired, long keptPinned, long bytesFreed,
                      long millis) implements Message {
    /** {@code bytesFreed} when no compaction ran. */
    public static final long UNKNOWN_BYTES = -1;

    public GcSwept {
        String bad = problem(flags, horizon, chunksVisited, chunksSkipped, blocksFreed, reclaimable, keptReferenced, keptUnexpired,
                keptPinned, bytesFreed, millis);
        if (bad != null) {
            throw new IllegalArgumentException("GC_SWEPT " + bad);
        }
    }

    /** Why these figures cannot be a sweep's, or null. */
    static String problem(int flags, long horizon, long visited, long skipped, long freed, long reclaimable, long referenced,
                          long unexpired, long pinned, long bytes, long millis) {
        if ((flags & ~GcSweep.DRY_RUN) != 0) {
            return "flags " + flags + " name an unknown option (1 = dry run)";
        }
        long[] counts = {horizon, visited, skipped, freed, reclaimable, referenced, unexpired, pinned, millis};
        for (long c : counts) {
            if (c < 0) {
                return "figure " + Long.toUnsignedString(c) + " is out of range (0..2^63-1)";
            }
        }
        if (freed > reclaimable) {
            return "freed " + freed + " blocks of only " + reclaimable + " reclaimable";
        }
        if (bytes < 0 && bytes != UNKNOWN_BYTES) {
            return "bytes freed " + Long.toUnsignedString(bytes) + " is out of range";
        }
        return null;
    }

    /** True if it was a dry run. */
    public boolean dryRun() {
        return (flags & GcSweep.DRY_RUN) != 0;
    }

    @Override
    public MessageType type() {
        return MessageType.GC_SWEPT;
    }
}
