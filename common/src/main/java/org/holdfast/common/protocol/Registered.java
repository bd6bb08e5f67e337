package org.holdfast.common.protocol;

/**
 * REGISTERED (0x41), master to worker: the worker is a member. Its id, the epoch of this
 * registration (one more on every registration of the same node), the PBN range
 * {@code [pbnFirst, pbnLimit)} it owns, and how often it must send HEARTBEAT. From cluster version 5
 * ({@link Register#ARCHIVE_EPOCH_VERSION}) also {@code pbnFloor}: the lowest PBN the worker may hand
 * out next (past every PBN the master heard this worker id hand out, so a node that takes the range
 * over never names a second block with one of them; {@link #NO_PBN_FLOOR}: not sent).
 */
public record Registered(long workerId, long epoch, long pbnFirst, long pbnLimit, int heartbeatMillis, String masterVersion,
                         long pbnFloor) implements Message {
    /** {@code pbnFloor} of a REGISTERED that does not carry it (an older master's, or one to a worker before version 5). */
    public static final long NO_PBN_FLOOR = -1;

    /** A REGISTERED without the PBN floor (cluster versions 1 to 4). */
    public Registered(long workerId, long epoch, long pbnFirst, long pbnLimit, int heartbeatMillis, String masterVersion) {
        this(workerId, epoch, pbnFirst, pbnLimit, heartbeatMillis, masterVersion, NO_PBN_FLOOR);
    }

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
        if (pbnFloor != NO_PBN_FLOOR && (pbnFloor < pbnFirst || pbnFloor > pbnLimit)) {
            throw new IllegalArgumentException("pbnFloor " + pbnFloor + " outside the range [" + pbnFirst + ", " + pbnLimit + "]");
        }
    }

    @Override
    public MessageType type() {
        return MessageType.REGISTERED;
    }
}
