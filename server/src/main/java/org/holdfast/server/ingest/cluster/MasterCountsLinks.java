package org.holdfast.server.ingest.cluster;

import org.holdfast.server.gc.ClusterCountsCheck;

/**
 * The master's links as its online counts check needs them: a worker's counts check end (registered at
 * cluster version 7), whether it is connected at all (its sweep end, any GC version), and its outbox.
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
}
