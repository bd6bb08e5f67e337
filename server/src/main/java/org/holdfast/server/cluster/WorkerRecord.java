package org.holdfast.server.cluster;

import java.util.Objects;
import org.holdfast.common.id.PbnRange;

/**
 * A worker's assignment as the master keeps it across restarts (catalog {@code cluster} column):
 * its id, node name, the epoch of its latest registration, its PBN range, when it first and last
 * registered (epoch milliseconds), and the id of the API token it is bound to ({@code ""}: not
 * bound yet, a record stored before bindings existed; the next token to register it binds it).
 */
public record WorkerRecord(long workerId, String nodeName, long epoch, PbnRange range, long firstRegisteredMillis,
                           long lastRegisteredMillis, String tokenId) {
    /** Longest token id a record holds (API token ids are 16 hex digits). */
    public static final int MAX_TOKEN_ID = 64;

    public WorkerRecord {
        Objects.requireNonNull(nodeName, "nodeName");
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(tokenId, "tokenId");
        if (workerId < 1 || epoch < 1) {
            throw new IllegalArgumentException("worker id and epoch start at 1, got " + workerId + " and " + epoch);
        }
        if (tokenId.length() > MAX_TOKEN_ID || !tokenId.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
            throw new IllegalArgumentException("a token id is at most " + MAX_TOKEN_ID + " printable ASCII characters, got '"
                    + tokenId + "'");
        }
    }

    /** An assignment bound to no token: what a version 1 record holds, and what a worker knows of itself. */
    public WorkerRecord(long workerId, String nodeName, long epoch, PbnRange range, long firstRegisteredMillis,
                        long lastRegisteredMillis) {
        this(workerId, nodeName, epoch, range, firstRegisteredMillis, lastRegisteredMillis, "");
    }

    /** True once a token is bound to this worker. */
    public boolean bound() {
        return !tokenId.isEmpty();
    }

    /** The same worker bound to token {@code to} instead (an admin rotating its token): id, range and epoch stay. */
    WorkerRecord reboundTo(String to) {
        return new WorkerRecord(workerId, nodeName, epoch, range, firstRegisteredMillis, lastRegisteredMillis, to);
    }

    /**
     * The same worker taken over by node {@code newNode} (an admin replacing a lost host): id, range
     * and epoch stay, bound to token {@code to} (empty: to none, so the replacement's token binds it
     * at its first registration), which raises the epoch as every registration does.
     */
    WorkerRecord replacedBy(String newNode, String to) {
        return new WorkerRecord(workerId, newNode, epoch, range, firstRegisteredMillis, lastRegisteredMillis, to);
    }

    /**
     * The same worker registered again at {@code nowMillis} by token {@code by}: epoch + 1, same id
     * and range, bound to {@code by} if it was not bound.
     */
    WorkerRecord reregistered(long nowMillis, String by) {
        return new WorkerRecord(workerId, nodeName, epoch + 1, range, firstRegisteredMillis, nowMillis, bound() ? tokenId : by);
    }
}
