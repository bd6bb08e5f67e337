package org.holdfast.common.protocol;

/**
 * DEDUP_CONTROL (0x48), master to worker: one of the small calls ({@link #END_STREAM} of
 * {@code stream}, {@link #FLUSH}, {@link #LOAD}; {@code stream} is 0 for the last two). Answered by DEDUP_DONE.
 */
public record DedupControl(long requestId, int op, long stream) implements Message {
    /** Drop the per-stream state of {@code stream}. */
    public static final int END_STREAM = 1;
    /** Make the engine state durable. */
    public static final int FLUSH = 2;
    /** Only report the load. */
    public static final int LOAD = 3;

    public DedupControl {
        if (op < END_STREAM || op > LOAD) {
            throw new IllegalArgumentException("unknown DEDUP_CONTROL op " + op);
        }
    }

    @Override
    public MessageType type() {
        return MessageType.DEDUP_CONTROL;
    }
}
