package org.holdfast.server.store;

import java.time.Duration;
import java.util.List;

/**
 * The last step of a catalog backup on backend s3: seals the active data log and waits until every
 * sealed log is confirmed in the object store, so that the bucket holds every block the backup
 * names and a new disk restores all of its snapshots from the bucket alone. Without it the blocks
 * in the log being written when the backup was taken lived only on the disk the backup should
 * survive. A local store needs nothing.
 */
public final class DataLogsInBucket {
    /** For a store without an object store (and for tests of the jobs alone). */
    public static final DataLogsInBucket NONE = new DataLogsInBucket(null, Duration.ZERO);

    private final DataStore store;
    private final Duration timeout;

    /** {@code store} null or local: nothing to do; {@code timeout}: how long to wait for the uploads. */
    public DataLogsInBucket(DataStore store, Duration timeout) {
        this.store = store;
        this.timeout = timeout;
    }

    /** Whether the store keeps its logs in an object store (else {@link #seal()} does nothing). */
    public boolean archived() {
        return store != null && store.archive() != null;
    }

    /** How long {@link #seal()} waits for the uploads. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Seals the active log and waits up to the timeout for the uploads; returns the ids of the logs
     * still not in the bucket (empty: all there, or a local store).
     */
    public List<Integer> seal() {
        if (!archived()) {
            return List.of();
        }
        int below = store.sealActiveLog();
        return store.archive().awaitUploadedBelow(below, timeout.toMillis());
    }
}
