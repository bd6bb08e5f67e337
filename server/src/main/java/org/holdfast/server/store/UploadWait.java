package org.holdfast.server.store;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A wait for the sealed logs below a bound to reach the object store (a catalog backup's last step,
 * {@link DataLogsInBucket}): failed uploads are scheduled again with a growing backoff, and the
 * caller is told what is awaited.
 */
final class UploadWait {
    /** First wait before a failed upload is tried again by {@link #awaitUploadedBelow}; doubled per failure, up to {@link #RETRY_MAX_MILLIS}. */
    static final long RETRY_FIRST_MILLIS = 1_000;
    /** Longest wait between two tries of a failing upload in {@link #awaitUploadedBelow}. */
    static final long RETRY_MAX_MILLIS = 30_000;
    private static final long POLL_MILLIS = 1_000;

    private final Path dir;
    private final UploadRecords records;
    private final LogUploads uploads;
    private final ExecutorService uploader;
    private final ArchiveCounters counters;

    UploadWait(Path dir, UploadRecords records, LogUploads uploads, ExecutorService uploader, ArchiveCounters counters) {
        this.dir = dir;
        this.records = records;
        this.uploads = uploads;
        this.uploader = uploader;
        this.counters = counters;
    }

    /** See {@link LogArchive#awaitUploadedBelow}. */
    List<Integer> awaitUploadedBelow(int below, long stallMillis, Consumer<String> progress) {
        List<Integer> missing = notUploadedBelow(below);
        if (missing.isEmpty()) {
            return missing;
        }
        progress.accept("waiting for data logs " + missing + " to reach the object store (giving up after "
                + seconds(stallMillis) + " s without one getting through)");
        long lastProgress = System.nanoTime();
        long retryMillis = RETRY_FIRST_MILLIS;
        long failuresSeen = counters.uploadFailures.get();
        while (!missing.isEmpty()) {
            long left = stallMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastProgress);
            if (left <= 0) {
                break;
            }
            uploads.sealedBelow(below); // schedules the uploads again after a failed one; nothing while they run
            try {
                uploader.submit(() -> { }).get(Math.min(left, POLL_MILLIS), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // still uploading: look again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (ExecutionException e) {
                break; // the uploader is closed
            }
            List<Integer> now = notUploadedBelow(below);
            if (now.size() < missing.size()) {
                lastProgress = System.nanoTime();
                retryMillis = RETRY_FIRST_MILLIS;
                if (!now.isEmpty()) {
                    progress.accept("waiting for data logs " + now + " to reach the object store (" + (missing.size() - now.size())
                            + " more got through)");
                }
            }
            missing = now;
            long failures = counters.uploadFailures.get();
            if (missing.isEmpty() || failures == failuresSeen) {
                continue;
            }
            failuresSeen = failures;
            left = stallMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastProgress);
            if (left <= 0) {
                break;
            }
            long wait = Math.min(retryMillis, left);
            progress.accept("uploading data logs " + missing + " failed (" + failures + " failed uploads so far: see the server log);"
                    + " retry in " + seconds(wait) + " s, giving up after " + seconds(left) + " s more without one getting through");
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            retryMillis = Math.min(retryMillis * 2, RETRY_MAX_MILLIS);
        }
        return missing;
    }

    private static long seconds(long millis) {
        return (millis + 999) / 1000;
    }

    private List<Integer> notUploadedBelow(int below) {
        List<Integer> out = new ArrayList<>();
        for (int id = 0; id < below; id++) {
            if (!records.isUploaded(id) && Files.exists(dir.resolve(DataLog.fileName(id)))) {
                out.add(id);
            }
        }
        return out;
    }
}
