package org.holdfast.common.protocol;

/**
 * STALE_MARKS_TAKEN (0x65), master to worker (cluster version 8): what became of STALE_MARKS part
 * {@code partId}. {@link #TAKEN}: every other worker's engine that may hold the PBNs forgot them (the
 * worker drops the part); {@link #LATER}: not forwarded yet (a worker is not connected; the worker keeps
 * the part and sends it again); {@link #REFUSED}: the part is bad (a PBN outside the sender's range),
 * nothing was forwarded and it never will be (the worker drops it and logs {@code message}).
 */
public record StaleMarksTaken(long partId, int status, String message) implements Message {
    public static final int TAKEN = 0;
    public static final int LATER = 1;
    public static final int REFUSED = 2;

    public StaleMarksTaken {
        if (status < TAKEN || status > REFUSED) {
            throw new IllegalArgumentException("STALE_MARKS_TAKEN status " + status + " is unknown (0 taken, 1 later, 2 refused)");
        }
        WireStrings.check("message", message, ProtocolLimits.MAX_ERROR_MESSAGE);
    }

    /** An answer whose message is cut to fit the frame. */
    public static StaleMarksTaken of(long partId, int status, String message) {
        return new StaleMarksTaken(partId, status, WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    @Override
    public MessageType type() {
        return MessageType.STALE_MARKS_TAKEN;
    }
}
