package org.holdfast.server.cluster;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * This node's place in the cluster, for the REST API and the console: its role and node name, the
 * cluster address (where a master listens for workers, or the master a worker connects to), and,
 * depending on the role, the master's registry or the worker's own status.
 */
public final class ClusterNode {
    private final ClusterRole role;
    private final String nodeName;
    private final String clusterAddress;
    private final WorkerRegistry registry;
    private final Supplier<WorkerStatus> workerStatus;

    private ClusterNode(ClusterRole role, String nodeName, String clusterAddress, WorkerRegistry registry,
                        Supplier<WorkerStatus> workerStatus) {
        this.role = Objects.requireNonNull(role);
        this.nodeName = nodeName == null ? "" : nodeName;
        this.clusterAddress = clusterAddress == null ? "" : clusterAddress;
        this.registry = registry;
        this.workerStatus = workerStatus;
    }

    /** A standalone server. */
    public static ClusterNode standalone(String nodeName) {
        return new ClusterNode(ClusterRole.STANDALONE, nodeName, "", null, null);
    }

    /** A master listening for workers on {@code listenAddress}. */
    public static ClusterNode master(String nodeName, String listenAddress, WorkerRegistry registry) {
        return new ClusterNode(ClusterRole.MASTER, nodeName, listenAddress, Objects.requireNonNull(registry), null);
    }

    /** A worker connected (or connecting) to {@code masterAddress}. */
    public static ClusterNode worker(String nodeName, String masterAddress, Supplier<WorkerStatus> status) {
        return new ClusterNode(ClusterRole.WORKER, nodeName, masterAddress, null, Objects.requireNonNull(status));
    }

    public ClusterRole role() {
        return role;
    }

    public String nodeName() {
        return nodeName;
    }

    /** The master's cluster port (host:port) as configured; blank for standalone. */
    public String clusterAddress() {
        return clusterAddress;
    }

    /**
     * The workers, on a master.
     *
     * @throws NotAMasterException on a standalone server or a worker
     */
    public List<WorkerView> workers() {
        if (registry == null) {
            throw new NotAMasterException(role, clusterAddress);
        }
        return registry.workers();
    }

    /**
     * Removes a worker that is not connected, on a master ({@link WorkerRegistry#remove}).
     *
     * @throws NotAMasterException on a standalone server or a worker
     */
    public WorkerRecord removeWorker(long workerId) {
        if (registry == null) {
            throw new NotAMasterException(role, clusterAddress);
        }
        return registry.remove(workerId);
    }

    /**
     * Hands a lost worker's id and range to another node name, bound to worker token {@code tokenId}
     * (null: to the first that registers it), on a master ({@link WorkerRegistry#replace(long, String, String)}).
     *
     * @throws NotAMasterException on a standalone server or a worker
     */
    public WorkerRecord replaceWorker(long workerId, String newNodeName, String tokenId) {
        if (registry == null) {
            throw new NotAMasterException(role, clusterAddress);
        }
        return registry.replace(workerId, newNodeName, tokenId);
    }

    /**
     * Binds a worker to another worker token, on a master ({@link WorkerRegistry#rebind}).
     *
     * @throws NotAMasterException on a standalone server or a worker
     */
    public WorkerRecord rebindWorker(long workerId, String tokenId) {
        if (registry == null) {
            throw new NotAMasterException(role, clusterAddress);
        }
        return registry.rebind(workerId, tokenId);
    }

    /**
     * Drops a worker's takeover epoch if it is {@code confirmedEpoch}, on a master ({@link WorkerRegistry#resetTakeoverFence}).
     *
     * @throws NotAMasterException on a standalone server or a worker
     */
    public TakeoverFence resetTakeoverFence(long workerId, long confirmedEpoch) {
        return master().resetTakeoverFence(workerId, confirmedEpoch);
    }

    /**
     * What the master heard of a worker's range ({@link WorkerRegistry#fence}), on a master.
     *
     * @throws NotAMasterException on a standalone server or a worker
     */
    public TakeoverFence takeoverFence(long workerId) {
        return master().fence(workerId);
    }

    private WorkerRegistry master() {
        if (registry == null) {
            throw new NotAMasterException(role, clusterAddress);
        }
        return registry;
    }

    /** The worker's own membership, or null unless this node is a worker. */
    public WorkerStatus workerStatus() {
        return workerStatus == null ? null : workerStatus.get();
    }
}
