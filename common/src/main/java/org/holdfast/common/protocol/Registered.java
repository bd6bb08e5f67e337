package org.holdfast.common.protocol;

/**
 * REGISTERED (0x41), master to worker: the worker is a member. Its id, the epoch of this
 * registration (one more on every registration of the same node), the PBN range
 * {@code [pbnFirst, pbnLimit)} it owns, and how often it must send HEARTBEAT.
 */
public record Registered(long workerId, long epoch, long pbnFirst, long pbnLimit, int heartbeatMillis, String masterVersion)
        implements Message {
    public Registered {
        if (workerId < 1 || workerId > 0xffffffffL) {
            throw new IllegalArgumentException("workerId out of u32 range 1..: " + workerId);
        }
        Heartbeat.checkNotNegative("epoch", epoch);
        Heartbeat.checkNotNegative("pbnFirst", pbnFirst);
        if (pbnLimit <= pbnFirst) {
            throw new IllegalArgumentException("empty PBN range [" + pbnFirst + ", " + pbnLimit + ")");
        }
        if (heartbeatMillis < 1) {
            throw new IllegalArgumentException("heartbeatMillis must be positive: " + heartbeatMillis);
        }
        WireStrings.check("masterVersion", masterVersion, ProtocolLimits.MAX_SERVER_VERSION);
    }

    @Override
    public MessageType type() {
        return MessageType.REGISTERED;
    }
}
