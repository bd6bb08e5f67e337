package org.holdfast.server.jobs;

import java.util.Map;

/** The body of a job: does the work, reporting through the context, and answers a small result. */
@FunctionalInterface
public interface JobWork {
    /**
     * Runs the job. Throw {@link JobCancelledException} (via {@link JobContext#checkpoint()}) to stop
     * when asked; any other exception fails the job with its message.
     */
    Map<String, Object> run(JobContext job) throws Exception;
}
