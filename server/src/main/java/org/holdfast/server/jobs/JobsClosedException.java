package org.holdfast.server.jobs;

/** The runner is stopping with the server and takes no new jobs. */
public final class JobsClosedException extends RuntimeException {
    public JobsClosedException() {
        super("the server is stopping and accepts no new jobs; submit it again once the server is back");
    }
}
