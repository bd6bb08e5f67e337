package org.holdfast.server.cluster;

import org.holdfast.common.id.PbnRange;

/**
 * One worker as listed (REST {@code /api/v1/cluster/workers}): its assignment, where it connected
 * from, its state now, when the master last heard from it (epoch ms, 0 never; for display), what it
 * reported, the id of the token it is bound to ({@code ""}: not bound yet), and how long the master
 * has not heard it on its monotonic clock ({@code silentNanos}, {@link Long#MAX_VALUE}: not since the
 * master started or the worker was replaced; what timing decisions use).
 */
public record WorkerView(long workerId, String nodeName, String address, MemberState state, long epoch, PbnRange range,
                         long lastHeartbeatMillis, WorkerLoad load, WorkerCapacity capacity, String softwareVersion, String tokenId,
                         long silentNanos) {
}
