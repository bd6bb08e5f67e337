package org.holdfast.common.protocol;

/**
 * GC_DELTA_APPLIED (0x55), worker to master: every GC_DELTA up to part {@code part} of operation
 * {@code opId} (the highest delta in the worker's log) is durably logged: its log was synced before
 * this was sent. A delta sent again after a reconnect changes nothing and is answered the same way.
 */
public record GcDeltaApplied(long opId, int part) implements Message {
    public GcDeltaApplied {
        String bad = GcDelta.problem(opId, part);
        if (bad != null) {
            throw new IllegalArgumentException("GC_DELTA_APPLIED " + bad);
        }
    }

    /** The delta id of the highest delta logged. */
    public long deltaId() {
        return GcDelta.deltaId(opId, part);
    }

    @Override
    public MessageType type() {
        return MessageType.GC_DELTA_APPLIED;
    }
}
