package org.holdfast.server.jobs;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What a job is and did, as of one moment: a snapshot, never updated in place. Times are null until
 * they happen; {@code result} is set once the job succeeded (a small map of numbers, text, lists
 * and maps, see {@link JobResults}); {@code error} once it failed or was cancelled; {@code log}
 * holds the newest lines (at most {@link Jobs#LOG_LINES}).
 */
public record Job(long id, String kind, JobState state, String submittedBy, Instant submittedAt, Instant startedAt,
                  Instant endedAt, Progress progress, boolean cancelRequested, Map<String, Object> result, String error,
                  List<String> log) {

    public Job {
        log = List.copyOf(log);
    }

    /**
     * Work done and to do. A total of -1 is not known. Rates are per second since the job started;
     * {@code etaSeconds} is null when it cannot be estimated (no total, nothing done yet, finished).
     */
    public record Progress(long itemsDone, long itemsTotal, long bytesDone, long bytesTotal, double itemsPerSecond,
                           double bytesPerSecond, Long etaSeconds) {
        /** Nothing done, nothing known. */
        public static final Progress NONE = new Progress(0, -1, 0, -1, 0, 0, null);
    }

    /** This job ended in {@code state} at {@code at} with {@code error} (for the store's restart repair). */
    public Job ended(JobState end, Instant at, String message) {
        return new Job(id, kind, end, submittedBy, submittedAt, startedAt, endedAt == null ? at : endedAt, progress,
                cancelRequested, result, message, log);
    }
}
