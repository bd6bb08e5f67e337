package org.holdfast.server.cluster;

import java.time.Duration;
import org.holdfast.common.id.PbnRange;

/**
 * The master's membership rules: how often workers send heartbeats, after how long without one a
 * worker is late and then lost, and how PBN ranges are cut: worker {@code n} owns
 * {@code [firstPbn + (n-1) * rangeSize, firstPbn + n * rangeSize)}. {@code firstPbn} lies above
 * anything the master's own data store allocates, so worker ranges never meet the master's PBNs.
 * One worker token may register at most {@code maxNodesPerToken} node names, so a stolen token
 * cannot take range after range.
 */
public record MembershipSettings(Duration heartbeatInterval, Duration lateAfter, Duration lostAfter, long firstPbn, long rangeSize,
                                 int maxNodesPerToken) {
    /** Where worker ranges start by default: 2^48, far above the PBNs a single node allocates. */
    public static final long DEFAULT_FIRST_PBN = 1L << 48;
    /** Default range per worker: 2^40 PBNs (4 PiB of 4 KiB blocks). */
    public static final long DEFAULT_RANGE_SIZE = 1L << 40;
    /** Default for {@code holdfast.cluster.max-nodes-per-token}: one token per worker is the advice, a few spares for tests and moves. */
    public static final int DEFAULT_MAX_NODES_PER_TOKEN = 16;

    public MembershipSettings {
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()) {
            throw new IllegalArgumentException("holdfast.cluster.heartbeat-interval must be positive, got " + heartbeatInterval);
        }
        if (lateAfter.compareTo(heartbeatInterval) <= 0 || lostAfter.compareTo(lateAfter) <= 0) {
            throw new IllegalArgumentException("holdfast.cluster needs heartbeat-interval < late-after < lost-after, got "
                    + heartbeatInterval + ", " + lateAfter + ", " + lostAfter);
        }
        if (lostAfter.compareTo(Duration.ofDays(1)) > 0) { // REGISTERED tells workers this value, which they reject above a day
            throw new IllegalArgumentException("holdfast.cluster.lost-after must be at most 1 day, got " + lostAfter);
        }
        if (firstPbn < 1 || rangeSize < 1) {
            throw new IllegalArgumentException("PBN ranges need a positive first PBN and size, got " + firstPbn + " and " + rangeSize);
        }
        if (maxNodesPerToken < 1) {
            throw new IllegalArgumentException("holdfast.cluster.max-nodes-per-token must be at least 1, got " + maxNodesPerToken
                    + "; leave it out for the default (" + DEFAULT_MAX_NODES_PER_TOKEN + ")");
        }
    }

    /** These rules with the default {@link #DEFAULT_MAX_NODES_PER_TOKEN}. */
    public MembershipSettings(Duration heartbeatInterval, Duration lateAfter, Duration lostAfter, long firstPbn, long rangeSize) {
        this(heartbeatInterval, lateAfter, lostAfter, firstPbn, rangeSize, DEFAULT_MAX_NODES_PER_TOKEN);
    }

    /**
     * The state of a worker whose connection is {@code connected} and that has not been heard for
     * {@code silentNanos} (on the master's monotonic clock: a wall clock stepped forward must not make
     * a node sending heartbeats lost). Thresholds are on time: late only after more than {@code lateAfter}.
     */
    public MemberState stateAfter(boolean connected, long silentNanos) {
        if (!connected || silentNanos > lostAfter.toNanos()) {
            return MemberState.LOST;
        }
        return silentNanos > lateAfter.toNanos() ? MemberState.LATE : MemberState.UP;
    }

    /**
     * The PBN range of worker {@code workerId} by these rules: {@code [firstPbn + (id-1) * size, firstPbn + id * size)}.
     *
     * @throws ArithmeticException if it lies past the PBN space
     */
    public PbnRange rangeOf(long workerId) {
        long first = Math.addExact(firstPbn, Math.multiplyExact(workerId - 1, rangeSize));
        return new PbnRange(first, Math.addExact(first, rangeSize));
    }

    /**
     * The inverse of {@link #rangeOf}, for a worker that knows only its own id and range: the
     * {@code firstPbn} they were cut from, or 0 if they do not fit the layout (id below 1, empty range,
     * or a start below 1 or past the PBN space).
     */
    public static long firstPbnOf(long workerId, long rangeFirst, long rangeLimit) {
        if (workerId < 1 || rangeFirst < 1 || rangeLimit <= rangeFirst) {
            return 0;
        }
        try {
            long first = Math.subtractExact(rangeFirst, Math.multiplyExact(workerId - 1, rangeLimit - rangeFirst));
            return Math.max(first, 0);
        } catch (ArithmeticException e) {
            return 0;
        }
    }

    /** The defaults: heartbeats every 2 s, late after 6 s, lost after 15 s. */
    public static MembershipSettings defaults() {
        return new MembershipSettings(Duration.ofSeconds(2), Duration.ofSeconds(6), Duration.ofSeconds(15), DEFAULT_FIRST_PBN,
                DEFAULT_RANGE_SIZE);
    }
}
