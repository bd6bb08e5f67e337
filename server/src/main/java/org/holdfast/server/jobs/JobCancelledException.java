package org.holdfast.server.jobs;

/** Thrown at a safe point of a job that was asked to stop; everything done before it is kept. */
public final class JobCancelledException extends RuntimeException {
    public JobCancelledException() {
        super("the job was cancelled at a safe point; the work done before it is kept");
    }
}
