package org.holdfast.server.ingest.cluster;

/** A worker answered a data call DATA_FAILED (refused or failed it, nothing of it stored), or its answer did not hold what was asked. */
public final class RangeWorkerFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RangeWorkerFailedException(String message) {
        super(message);
    }
}
