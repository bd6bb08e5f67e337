package org.holdfast.server.store;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

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
    private final Duration stall;

    /**
     * {@code store} null or local: nothing to do; {@code stall}: how long to wait for the uploads while
     * none gets through ({@code holdfast.store.s3.upload-stall-timeout}).
     */
    public DataLogsInBucket(DataStore store, Duration stall) {
        this.store = store;
        this.stall = stall;
    }

    /** Whether the store keeps its logs in an object store (else {@link #seal()} does nothing). */
    public boolean archived() {
        return store != null && store.archive() != null;
    }

    /** How long {@link #seal} waits while no upload gets through. */
    public Duration stall() {
        return stall;
    }

    /**
     * Seals the active log and waits for the uploads until none got through for the stall time
     * ({@link LogArchive#awaitUploadedBelow}, retrying failed ones with a growing backoff), telling
     * {@code progress} what it waits for; returns the ids of the logs still not in the bucket (empty:
     * all there, or a local store).
     */
    public List<Integer> seal(Consumer<String> progress) {
        if (!archived()) {
            return List.of();
        }
        int below = store.sealActiveLog();
        return store.archive().awaitUploadedBelow(below, stall.toMillis(), progress);
    }
}
