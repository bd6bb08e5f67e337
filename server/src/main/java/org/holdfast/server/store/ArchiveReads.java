package org.holdfast.server.store;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.holdfast.server.store.object.ObjectMissingException;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreUnavailableException;

/**
 * Reads of confirmed logs' objects: ranged GETs for the cache (with the witness check before a
 * missing object counts as a lost log), and a whole object's size and download for a compaction
 * whose source the cache evicted.
 */
final class ArchiveReads {
    /** How many other confirmed logs {@link #checkBucketHoldsOtherLogs} looks for (one HEAD each). */
    static final int WITNESS_LOGS = 3;

    private final ObjectStore objects;
    private final Path dir;
    private final UploadRecords records;
    private final ArchiveCounters counters;

    ArchiveReads(ObjectStore objects, Path dir, UploadRecords records, ArchiveCounters counters) {
        this.objects = objects;
        this.dir = dir;
        this.records = records;
        this.counters = counters;
    }

    /**
     * Up to {@code length} bytes of confirmed log {@code id}'s object from {@code offset} (fewer at its
     * end): a ranged GET. A log never confirmed, or a confirmed one whose object is gone, is corrupt data.
     */
    byte[] getRange(int id, long offset, int length) {
        String key = records.uploadedKeyOf(id);
        if (key == null) {
            throw new DataLogMissingException("log-archive", dir.resolve(DataLog.fileName(id)).toString(), id,
                    "data log " + id + " is missing locally and was never confirmed uploaded");
        }
        try {
            return objects.getRange(key, offset, length);
        } catch (ObjectMissingException e) {
            checkBucketHoldsOtherLogs(id, key, e);
            throw new DataLogMissingException("log-archive", key, id,
                    "data log " + id + " is missing locally and its object " + key + " is gone from the object store");
        }
    }

    /**
     * Before log {@code id}'s object counts as gone (which marks every block of the log bad): do the
     * newest other confirmed logs' objects answer? If none of up to {@link #WITNESS_LOGS} does, the
     * bucket, prefix or endpoint is not this node's any more (a setting changed, another bucket of the
     * same name): an outage of the configuration, not a lost log, and nothing is marked. With no other
     * confirmed log there is nothing to compare with, and the log counts as gone.
     */
    private void checkBucketHoldsOtherLogs(int id, String key, ObjectMissingException cause) {
        int asked = 0;
        List<Integer> ids = new ArrayList<>(records.uploadedIds());
        for (int i = ids.size() - 1; i >= 0; i--) {
            int other = ids.get(i);
            if (other == id) {
                continue;
            }
            if (objects.size(records.objectKeyOf(other)).isPresent()) {
                return;
            }
            if (++asked == WITNESS_LOGS) {
                break;
            }
        }
        if (asked > 0) {
            throw new ObjectStoreUnavailableException(ObjectStoreUnavailableException.Reason.REJECTED, "the object store answers that"
                    + " data log " + id + "'s object " + key + " does not exist, and neither do the objects of the " + asked + " newest"
                    + " other confirmed logs: holdfast.store.s3.bucket, prefix or endpoint most likely no longer names this node's"
                    + " bucket; nothing was marked bad; check those settings against where the logs were uploaded and restart", cause);
        }
    }

    /** The size of confirmed log {@code id}'s object (one HEAD): for compaction when its file was evicted. */
    long uploadedSize(int id) {
        String key = records.objectKeyOf(id);
        OptionalLong size = objects.size(key);
        if (size.isEmpty()) {
            throw new CorruptDataException("log-archive", key, null, "data log " + id + " is confirmed uploaded but its object is gone");
        }
        return size.getAsLong();
    }

    /** Downloads confirmed log {@code id}'s object into {@code target} (a compaction's source when the file was evicted). */
    void downloadUploaded(int id, Path target) {
        String key = records.objectKeyOf(id);
        try {
            objects.download(key, target);
        } catch (ObjectMissingException e) {
            throw new CorruptDataException("log-archive", key, null, "data log " + id + " is confirmed uploaded but its object is gone");
        }
        counters.fetched.incrementAndGet();
    }
}
