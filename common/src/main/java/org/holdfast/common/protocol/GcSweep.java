package org.holdfast.common.protocol;

/**
 * GC_SWEEP (0x5B), master to worker (distributed GC): sweep your PBN range, freeing every block the
 * worker's own GC metadata finds unreferenced, expired and unpinned, and answer GC_SWEPT with the
 * figures (or GC_SWEEP_FAILED). {@code now} is the master's time in epoch ms, or {@link #NO_TIME}:
 * the worker sweeps as of the earlier of it and its own clock, capped by its grace guard, so a
 * master's clock ahead of the worker's can never free a block early. With {@link #DRY_RUN} the
 * worker only counts what a sweep would free.
 */
public record GcSweep(long requestId, long now, int flags) implements Message {
    /** {@code now} when the master names no time: the worker's clock alone decides. */
    public static final long NO_TIME = 0;
    /** Count what a sweep would free, change nothing. */
    public static final int DRY_RUN = 1;

    public GcSweep {
        String bad = problem(now, flags);
        if (bad != null) {
            throw new IllegalArgumentException("GC_SWEEP " + bad);
        }
    }

    /** Why {@code now} and {@code flags} cannot be a sweep request, or null. */
    static String problem(long now, int flags) {
        if (now < 0) {
            return "time " + Long.toUnsignedString(now) + " is not an epoch millisecond (0 for none)";
        }
        if ((flags & ~DRY_RUN) != 0) {
            return "flags " + flags + " name an unknown option (1 = dry run)";
        }
        return null;
    }

    /** True if the worker is to count only. */
    public boolean dryRun() {
        return (flags & DRY_RUN) != 0;
    }

    @Override
    public MessageType type() {
        return MessageType.GC_SWEEP;
    }
}
