package org.holdfast.server.jobs;

/**
 * What a running job reports to its runner (work done and total, log lines) and asks of it (whether
 * to stop). A job calls {@link #checkpoint()} only where stopping loses nothing.
 */
public interface JobContext {
    /** A context that reports nowhere and is never cancelled, for callers outside the job system. */
    JobContext NONE = new JobContext() {
        @Override
        public void total(long items, long bytes) {
        }

        @Override
        public void advance(long items, long bytes) {
        }

        @Override
        public void log(String line) {
        }

        @Override
        public boolean cancelRequested() {
            return false;
        }
    };

    /** Sets the amount of work once known; -1 for a figure that is not known. */
    void total(long items, long bytes);

    /** Adds finished work (items and bytes) to the progress. */
    void advance(long items, long bytes);

    /** Adds a line to the job's log (the runner keeps a bounded number). */
    void log(String line);

    /** True once someone asked the job to stop. */
    boolean cancelRequested();

    /** Throws {@link JobCancelledException} if someone asked the job to stop; call it only at a safe point. */
    default void checkpoint() {
        if (cancelRequested()) {
            throw new JobCancelledException();
        }
    }
}
