package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Something that backs up volume images and restores them: Holdfast with one dedup engine, or a
 * peer tool. One instance serves one workload: {@link #open} starts it fresh, backups come in day
 * order, restores after all backups.
 */
public interface BackupTarget extends AutoCloseable {
    /** Name in reports, e.g. holdfast-sungem, restic, borg. */
    String name();

    /** Starts with an empty repository under {@code dir}. */
    void open(Path dir) throws IOException;

    /** Backs up the image's current state as the volume's snapshot of {@code day}. */
    BackupOutcome backup(String volume, int day, Path image) throws IOException;

    /** Restores the volume's snapshot of {@code day} into the file {@code target}. */
    RestoreOutcome restore(String volume, int day, Path target) throws IOException;

    /** Bytes the repository takes on disk now. */
    long storedBytes() throws IOException;

    /** Settings and versions to record beside the results. */
    Map<String, Object> describe();

    /** Figures only a long-running target has (server RSS, engine metrics); empty for peers. */
    default Map<String, Object> serverFigures() {
        return Map.of();
    }

    @Override
    void close() throws IOException;

    /**
     * One backup: wall time and peak memory of the client process, and what it reported (-1 where
     * it reports nothing): its own elapsed time (without process start-up), bytes sent or added, blocks it saw as changed, zero blocks among them,
     * and blocks the server stored as new.
     */
    record BackupOutcome(double seconds, double toolSeconds, long clientPeakRssBytes, long sentBytes, long changedBlocks,
                         long zeroBlocks, long newBlocks, String snapshotId) {
        /** Changed non-zero blocks the server did not store: the duplicates its engine found. */
        public long duplicateBlocks(long groundTruthChangedZeroBlocks) {
            if (changedBlocks < 0 || newBlocks < 0) {
                return -1;
            }
            long zero = zeroBlocks >= 0 ? zeroBlocks : groundTruthChangedZeroBlocks;
            return Math.max(0, changedBlocks - zero - newBlocks);
        }
    }

    /**
     * One restore: wall time and peak memory of the client process, the time it reported itself (-1 if
     * none), and the data-log regions the server read for it (-1 if the target does not tell).
     */
    record RestoreOutcome(double seconds, double toolSeconds, long clientPeakRssBytes, long regionsRead) {
        public RestoreOutcome(double seconds, double toolSeconds, long clientPeakRssBytes) {
            this(seconds, toolSeconds, clientPeakRssBytes, -1);
        }
    }
}
