package org.holdfast.common.protocol;

/**
 * HEARTBEAT (0x42), worker to master every heartbeat interval: a sequence number and the load
 * figures the worker can read cheaply. {@code loadMilli} is the one-minute system load average
 * times 1000, or {@link #UNKNOWN_LOAD} where the platform has none. The master answers HEARTBEAT_ACK.
 */
public record Heartbeat(long sequence, long loadMilli, long heapUsedBytes, long heapMaxBytes, long diskFreeBytes)
        implements Message {
    /** {@code loadMilli} when the system load average is not available. */
    public static final long UNKNOWN_LOAD = 0xffffffffL;

    public Heartbeat {
        checkNotNegative("sequence", sequence);
        if (loadMilli < 0 || loadMilli > UNKNOWN_LOAD) {
            throw new IllegalArgumentException("loadMilli out of u32 range: " + loadMilli);
        }
        checkNotNegative("heapUsedBytes", heapUsedBytes);
        checkNotNegative("heapMaxBytes", heapMaxBytes);
        checkNotNegative("diskFreeBytes", diskFreeBytes);
    }

    static void checkNotNegative(String field, long v) {
        if (v < 0) {
            throw new IllegalArgumentException(field + " must not be negative: " + v);
        }
    }

    @Override
    public MessageType type() {
        return MessageType.HEARTBEAT;
    }
}
