package org.holdfast.server.cluster;

/** A question only a master can answer (the worker list) was asked of a standalone server or a worker. */
public final class NotAMasterException extends RuntimeException {
    public NotAMasterException(ClusterRole role, String masterAddress) {
        super(role == ClusterRole.WORKER
                ? "this node is a worker; ask the master (its cluster port is " + masterAddress + ") through the master's REST API"
                : "this server runs standalone (holdfast.cluster.role=standalone): it has no workers; start it with"
                        + " holdfast.cluster.role=master to accept workers");
    }
}
