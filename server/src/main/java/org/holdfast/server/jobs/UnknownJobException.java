package org.holdfast.server.jobs;

/** No job has this id (never had, or it left the bounded history). */
public final class UnknownJobException extends RuntimeException {
    public UnknownJobException(String id) {
        super("no job '" + id + "' (ids are numbers from GET /api/v1/jobs; the history keeps the newest "
                + Jobs.HISTORY + " jobs)");
    }
}
