package org.holdfast.server.ingest.cluster;

import org.holdfast.server.cluster.UnknownWorkerException;
import org.holdfast.server.gc.ClusterCountsCheck;

/**
 * The master's links as its online counts check needs them: a worker's counts check end (registered at
 * cluster version 7), whether it is connected at all (its sweep end, any GC version), its outbox, and
 * past the PBNs it handed out (its PBN floor and what its links were heard storing).
 */
public final class MasterCountsLinks implements ClusterCountsCheck.Links {
    private final ClusterServer server;
    private final GcDeltaSenders senders;

    public MasterCountsLinks(ClusterServer server, GcDeltaSenders senders) {
        this.server = server;
        this.senders = senders;
    }

    @Override
    public ClusterCountsCheck.Remote counts(long workerId) {
        RemoteCountsCheck r = server.countsChecks().up(workerId);
        return r == null ? null : r::check;
    }

    @Override
    public boolean connected(long workerId) {
        return server.rangeSweeps().up(workerId) != null;
    }

    @Override
    public long pending(long workerId) {
        return senders.pending(workerId);
    }

    @Override
    public long handedOutPast(long workerId) {
        long floor;
        try {
            floor = server.registry().pbnFloor(workerId); // what earlier nodes of it were heard handing out, kept in the catalog
        } catch (UnknownWorkerException e) {
            floor = 0;
        }
        return Math.max(floor, server.rangeStores().handedOutPast(workerId));
    }
}
