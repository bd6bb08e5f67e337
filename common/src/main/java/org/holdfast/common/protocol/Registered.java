package org.holdfast.common.protocol;

/**
 * REGISTERED (0x41), master to worker: the worker is a member. Its id, the epoch of this
 * registration (one more on every registration of the same node), the PBN range
 * {@code [pbnFirst, pbnLimit)} it owns, and how often it must send HEARTBEAT. From cluster version 5
 * ({@link Register#ARCHIVE_EPOCH_VERSION}) also {@code pbnFloor}: the lowest PBN the worker may hand
 * out next (past every PBN the master heard this worker id hand out, so a node that takes the range
 * over never names a second block with one of them; {@link #NO_PBN_FLOOR}: not sent) and
 * {@code lostAfterMillis}: the master's {@code holdfast.cluster.lost-after}, which bounds the worker's
 * delete lease (1 ms to 1 day; {@link #NO_LOST_AFTER}: not sent). Version 5 sends both or neither. On a
 * link of version 7 ({@link Register#NODE_GENERATION_VERSION}) also {@code generation}: the node
 * generation the master issued for this registration (≥ 1), which the worker stores in its range data
 * before it serves and presents at its next REGISTER ({@link Register#NO_GENERATION}: not sent).
 */
public record Registered(long workerId, long epoch, long pbnFirst, long pbnLimit, int heartbeatMillis, String masterVersion,
                         long pbnFloor, long lostAfterMillis, long generation) implements Message {
    /** {@code pbnFloor} of a REGISTERED that does not carry it (an older master's, or one to a worker before version 5). */
    public static final long NO_PBN_FLOOR = -1;
    /** {@code lostAfterMillis} of a REGISTERED that does not carry it (sent together with {@code pbnFloor}). */
    public static final long NO_LOST_AFTER = -1;
    /** Largest lost-after a master may announce: one day (a longer one is a misconfiguration, not a cluster). */
    public static final long MAX_LOST_AFTER_MILLIS = 86_400_000L;

    /** A REGISTERED without a node generation (cluster versions 5 and 6, or 1 to 4 without the floor). */
    public Registered(long workerId, long epoch, long pbnFirst, long pbnLimit, int heartbeatMillis, String masterVersion,
                      long pbnFloor, long lostAfterMillis) {
        this(workerId, epoch, pbnFirst, pbnLimit, heartbeatMillis, masterVersion, pbnFloor, lostAfterMillis, Register.NO_GENERATION);
    }

    /** A REGISTERED without the PBN floor (cluster versions 1 to 4). */
    public Registered(long workerId, long epoch, long pbnFirst, long pbnLimit, int heartbeatMillis, String masterVersion) {
        this(workerId, epoch, pbnFirst, pbnLimit, heartbeatMillis, masterVersion, NO_PBN_FLOOR, NO_LOST_AFTER);
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
        if ((pbnFloor == NO_PBN_FLOOR) != (lostAfterMillis == NO_LOST_AFTER)) {
            throw new IllegalArgumentException("pbnFloor and lostAfterMillis come together (cluster version 5) or not at all: "
                    + pbnFloor + ", " + lostAfterMillis);
        }
        if (lostAfterMillis != NO_LOST_AFTER && (lostAfterMillis < 1 || lostAfterMillis > MAX_LOST_AFTER_MILLIS)) {
            throw new IllegalArgumentException("master's lostAfterMillis must be 1.." + MAX_LOST_AFTER_MILLIS + " (1 day), got "
                    + lostAfterMillis + ": check holdfast.cluster.lost-after on the master");
        }
        if (generation != Register.NO_GENERATION && (generation < 1 || pbnFloor == NO_PBN_FLOOR)) {
            throw new IllegalArgumentException("generation " + generation + " must be 1 or more and follow pbnFloor and lostAfterMillis"
                    + " (cluster version 7)");
        }
    }

    @Override
    public MessageType type() {
        return MessageType.REGISTERED;
    }
}
