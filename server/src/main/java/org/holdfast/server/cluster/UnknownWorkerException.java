package org.holdfast.server.cluster;

/** No worker with the id asked for is registered with this master. */
public final class UnknownWorkerException extends RuntimeException {
    public UnknownWorkerException(long workerId) {
        super("no worker with id " + workerId + " is registered with this master; GET /api/v1/cluster/workers lists them");
    }
}
