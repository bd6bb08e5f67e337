package org.holdfast.common.protocol;

/**
 * GC_DELTA_FAILED (0x56), worker to master: part {@code part} of operation {@code opId} was refused
 * or failed on the worker (a PBN outside its range, GC metadata that would not open), with why;
 * nothing of it was logged.
 */
public record GcDeltaFailed(long opId, int part, String message) implements Message {
    public GcDeltaFailed {
        String bad = GcDelta.problem(opId, part);
        if (bad != null) {
            throw new IllegalArgumentException("GC_DELTA_FAILED " + bad);
        }
        WireStrings.check("message", message, ProtocolLimits.MAX_ERROR_MESSAGE);
    }

    /** A failure whose message is cut to fit the frame. */
    public static GcDeltaFailed of(long opId, int part, String message) {
        return new GcDeltaFailed(opId, part, WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    /** The delta id of the refused delta. */
    public long deltaId() {
        return GcDelta.deltaId(opId, part);
    }

    @Override
    public MessageType type() {
        return MessageType.GC_DELTA_FAILED;
    }
}
