package org.holdfast.server.cluster;

import java.util.Objects;
import org.holdfast.common.protocol.StartOverReason;

/**
 * A worker's report that it started its dedup index over at a registration, as the master lists it
 * ({@code indexStartedOver}) and keeps it across restarts until a rebuild of that worker's index
 * answers it: when the worker says it happened ({@code atMillis}, epoch ms on the worker's clock, but
 * never after the master heard it), why ({@code reason}), and when the master heard it
 * ({@code receivedAtMillis}, the master's clock, what a rebuild's start is compared with). Until the
 * rebuild ({@code POST /api/v1/cluster/workers/{id}/rebuild}), duplicates of the blocks only that
 * worker's index held are missed.
 */
public record StartOverMark(long atMillis, StartOverReason reason, long receivedAtMillis) {
    public StartOverMark {
        Objects.requireNonNull(reason, "reason");
        if (atMillis <= 0 || receivedAtMillis <= 0) {
            throw new IllegalArgumentException("a start-over mark needs times above 0, got " + atMillis + " and " + receivedAtMillis);
        }
    }
}
