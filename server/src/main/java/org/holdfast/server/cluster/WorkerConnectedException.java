package org.holdfast.server.cluster;

/** A worker that is connected cannot be removed or replaced: it would go on serving with an index the master no longer tracks. */
public final class WorkerConnectedException extends RuntimeException {
    public WorkerConnectedException(WorkerRecord worker, String address) {
        this(worker, address, "stop the worker first, then remove it");
    }

    /** As above, the message ending with {@code next}: what to do about it. */
    public WorkerConnectedException(WorkerRecord worker, String address, String next) {
        super("worker " + worker.workerId() + " (" + worker.nodeName() + ") is connected from " + address + "; " + next);
    }
}
