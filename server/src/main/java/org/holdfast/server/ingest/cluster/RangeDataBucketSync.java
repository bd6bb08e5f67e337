package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.server.store.DataLogsInBucket;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.StoreException;

/**
 * A commit's durable point on an archiving worker ({@link WorkerRangeData#sync}): seals the range
 * store's active log and waits until every sealed log is confirmed in the bucket, failing past the
 * upload stall time.
 */
final class RangeDataBucketSync {
    // under WorkerRangeData's name, as before it moved here: log settings that name it keep working
    private static final System.Logger LOG = System.getLogger(WorkerRangeData.class.getName());

    private RangeDataBucketSync() {
    }

    /**
     * Seals {@code s}'s active log and waits for every sealed log to reach the bucket; fails if no upload
     * got through for {@code stall} ({@code dir}: the range store's directory, for the error).
     */
    static void sync(DataStore s, Duration stall, Path dir) {
        List<Integer> missing = new DataLogsInBucket(s, stall).seal(line ->
                // every commit waits for its log (debug); a failed upload and its retry are worth a warning
                LOG.log(line.startsWith("waiting for") ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING, line));
        if (!missing.isEmpty()) {
            throw new StoreException("range-data", dir.toString(), null, "the object store is not reachable: sealed data logs " + missing
                    + " of this worker's range did not reach the bucket (no upload got through for " + stall.toSeconds()
                    + " s, holdfast.store.s3.upload-stall-timeout), so the backup cannot commit. Check the worker's holdfast.store.s3.*"
                    + " settings and the object store's health (the worker log says why the uploads fail), then run the backup"
                    + " again", null);
        }
    }
}
