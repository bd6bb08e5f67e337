package org.holdfast.server.cluster;

/** A worker that is connected cannot be removed: it would go on serving with an index the master no longer tracks. */
public final class WorkerConnectedException extends RuntimeException {
    public WorkerConnectedException(WorkerRecord worker, String address) {
        super("worker " + worker.workerId() + " (" + worker.nodeName() + ") is connected from " + address
                + "; stop the worker first, then remove it");
    }
}
