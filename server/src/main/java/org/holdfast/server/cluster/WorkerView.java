package org.holdfast.server.cluster;

import org.holdfast.common.id.PbnRange;

/**
 * One worker as listed (REST {@code /api/v1/cluster/workers}): its assignment, where it connected
 * from, its state now, when the master last heard from it (epoch ms, 0 never), what it reported,
 * and the id of the token it is bound to ({@code ""}: not bound yet).
 */
public record WorkerView(long workerId, String nodeName, String address, MemberState state, long epoch, PbnRange range,
                         long lastHeartbeatMillis, WorkerLoad load, WorkerCapacity capacity, String softwareVersion, String tokenId) {
}
