package org.holdfast.server.jobs;

/** A request that needs a job still queued or running (cancel) met one that has ended. */
public final class JobFinishedException extends RuntimeException {
    private final Job job;

    public JobFinishedException(Job job) {
        super("job " + job.id() + " (" + job.kind() + ") has already " + job.state().wireName() + "; there is nothing to cancel");
        this.job = job;
    }

    public Job job() {
        return job;
    }
}
