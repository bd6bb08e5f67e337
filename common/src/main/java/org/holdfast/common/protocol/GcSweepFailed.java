package org.holdfast.common.protocol;

/**
 * GC_SWEEP_FAILED (0x5D), worker to master: the sweep GC_SWEEP {@code requestId} asked for did not
 * run or did not finish, with a {@code reason} and why in words. {@link #BUSY}: a sweep of the range
 * runs already (nothing started; ask again once it answered); {@link #REFUSED}: the worker's range
 * data or GC metadata is not open (nothing freed); {@link #FAILED}: the sweep stopped part way (what
 * it freed before is freed and marked; the next sweep goes on).
 */
public record GcSweepFailed(long requestId, int reason, String message) implements Message {
    public static final int BUSY = 1;
    public static final int REFUSED = 2;
    public static final int FAILED = 3;

    public GcSweepFailed {
        String bad = problem(reason);
        if (bad != null) {
            throw new IllegalArgumentException("GC_SWEEP_FAILED " + bad);
        }
        WireStrings.check("message", message, ProtocolLimits.MAX_ERROR_MESSAGE);
    }

    /** Why {@code reason} is no reason, or null. */
    static String problem(int reason) {
        return reason >= BUSY && reason <= FAILED ? null : "reason " + reason + " is unknown (1 busy, 2 refused, 3 failed)";
    }

    /** A failure whose message is cut to fit the frame. */
    public static GcSweepFailed of(long requestId, int reason, String message) {
        return new GcSweepFailed(requestId, reason, WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    @Override
    public MessageType type() {
        return MessageType.GC_SWEEP_FAILED;
    }
}
