package org.holdfast.common.protocol;

/**
 * GC_GUARD_FAILED (0x59), worker to master: GC_PROTECT {@code requestId} was refused or failed on
 * the worker (a PBN outside its range, GC metadata that would not open or failed), with why;
 * nothing of it can be relied on.
 */
public record GcGuardFailed(long requestId, String message) implements Message {
    public GcGuardFailed {
        WireStrings.check("message", message, ProtocolLimits.MAX_ERROR_MESSAGE);
    }

    /** A failure whose message is cut to fit the frame. */
    public static GcGuardFailed of(long requestId, String message) {
        return new GcGuardFailed(requestId, WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    @Override
    public MessageType type() {
        return MessageType.GC_GUARD_FAILED;
    }
}
