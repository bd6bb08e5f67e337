package org.holdfast.gc.bosc;

import java.time.Duration;

/**
 * Tuning of the BOSC pipeline.
 *
 * @param committerThreads   background commit threads (thesis Table 6.2 found 4 best on disks)
 * @param maxQueuedUpdates   updates held in chunk queues before the log flusher (and so producers) block
 * @param maxPendingRecords  log records buffered before appenders block
 * @param fsyncPolicy        when the log is forced
 * @param fsyncInterval      for {@link FsyncPolicy#INTERVAL}
 * @param segmentBytes       a log segment is closed after this many bytes
 * @param cacheChunks        GMA chunks kept in memory
 * @param commitBatchChunks  chunks a committer writes before one fsync and checkpoint advance
 * @param commitIdle         how long an idle committer waits for updates to accumulate
 * @param advanceCheckpoint  false only in tests that need the whole log replayed after a crash
 */
public record BoscSettings(int committerThreads, int maxQueuedUpdates, int maxPendingRecords,
        FsyncPolicy fsyncPolicy, Duration fsyncInterval, long segmentBytes, int cacheChunks,
        int commitBatchChunks, Duration commitIdle, boolean advanceCheckpoint) {

    public BoscSettings {
        if (committerThreads < 1 || committerThreads > 64) {
            throw new IllegalArgumentException("committerThreads must be 1..64: " + committerThreads);
        }
        if (maxQueuedUpdates < 1 || maxPendingRecords < 1 || segmentBytes < 4096 || cacheChunks < 1
                || commitBatchChunks < 1) {
            throw new IllegalArgumentException("BOSC sizes must be positive (segmentBytes >= 4096)");
        }
    }

    /**
     * Defaults for a small appliance: 2 committers, 1 M queued updates, fsync every batch; a
     * committer lets updates gather 200 ms between passes, so one chunk write carries many.
     */
    public static BoscSettings defaults() {
        return new BoscSettings(2, 1 << 20, 1 << 18, FsyncPolicy.EVERY_BATCH, Duration.ofMillis(100),
                64L << 20, 256, 64, Duration.ofMillis(200), true);
    }

    public BoscSettings withCommitters(int n) {
        return new BoscSettings(n, maxQueuedUpdates, maxPendingRecords, fsyncPolicy, fsyncInterval,
                segmentBytes, cacheChunks, commitBatchChunks, commitIdle, advanceCheckpoint);
    }

    public BoscSettings withQueueLimits(int queued, int pending) {
        return new BoscSettings(committerThreads, queued, pending, fsyncPolicy, fsyncInterval,
                segmentBytes, cacheChunks, commitBatchChunks, commitIdle, advanceCheckpoint);
    }

    public BoscSettings withFsync(FsyncPolicy policy, Duration interval) {
        return new BoscSettings(committerThreads, maxQueuedUpdates, maxPendingRecords, policy, interval,
                segmentBytes, cacheChunks, commitBatchChunks, commitIdle, advanceCheckpoint);
    }

    public BoscSettings withAdvanceCheckpoint(boolean advance) {
        return new BoscSettings(committerThreads, maxQueuedUpdates, maxPendingRecords, fsyncPolicy,
                fsyncInterval, segmentBytes, cacheChunks, commitBatchChunks, commitIdle, advance);
    }

    public BoscSettings withCommitIdle(Duration idle) {
        return new BoscSettings(committerThreads, maxQueuedUpdates, maxPendingRecords, fsyncPolicy,
                fsyncInterval, segmentBytes, cacheChunks, commitBatchChunks, idle, advanceCheckpoint);
    }
}
