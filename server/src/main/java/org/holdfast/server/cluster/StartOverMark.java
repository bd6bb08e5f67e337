package org.holdfast.server.cluster;

import java.util.Objects;
import org.holdfast.common.protocol.StartOverReason;

/**
 * A worker's report that it started its dedup index over, as the master keeps it across restarts
 * until a rebuild of that worker's index answers it: when the worker says it happened
 * ({@code atMillis}, epoch ms), why, and when the master heard it ({@code receivedAtMillis}, the
 * master's clock, what a rebuild's start is compared with).
 */
public record StartOverMark(long atMillis, StartOverReason reason, long receivedAtMillis) {
    public StartOverMark {
        Objects.requireNonNull(reason, "reason");
        if (atMillis <= 0 || receivedAtMillis <= 0) {
            throw new IllegalArgumentException("a start-over mark needs times above 0, got " + atMillis + " and " + receivedAtMillis);
        }
    }
}
