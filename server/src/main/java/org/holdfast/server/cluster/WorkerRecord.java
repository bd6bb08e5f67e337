package org.holdfast.server.cluster;

import java.util.Objects;

/**
 * A worker's assignment as the master keeps it across restarts (catalog {@code cluster} column):
 * its id, node name, the epoch of its latest registration, its PBN range, and when it first and
 * last registered (epoch milliseconds).
 */
public record WorkerRecord(long workerId, String nodeName, long epoch, PbnRange range, long firstRegisteredMillis,
                           long lastRegisteredMillis) {
    public WorkerRecord {
        Objects.requireNonNull(nodeName, "nodeName");
        Objects.requireNonNull(range, "range");
        if (workerId < 1 || epoch < 1) {
            throw new IllegalArgumentException("worker id and epoch start at 1, got " + workerId + " and " + epoch);
        }
    }

    /** The same worker registered again at {@code nowMillis}: epoch + 1, same id and range. */
    WorkerRecord reregistered(long nowMillis) {
        return new WorkerRecord(workerId, nodeName, epoch + 1, range, firstRegisteredMillis, nowMillis);
    }
}
