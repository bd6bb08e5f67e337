package org.holdfast.server.cluster;

import java.util.Locale;

/** What this node is in master/worker mode ({@code holdfast.cluster.role}). */
public enum ClusterRole {
    /** One server on its own: no cluster port, no master (the default; nothing changes). */
    STANDALONE,
    /** Serves agents, REST and the console, and accepts workers on the cluster port. */
    MASTER,
    /** Registers with a master and sends heartbeats; opens no agent port. */
    WORKER;

    /** Lower-case name as in the configuration and the API. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code standalone|master|worker}, any case. */
    public static ClusterRole parse(String s) {
        for (ClusterRole r : values()) {
            if (r.name().equalsIgnoreCase(s == null ? "" : s.trim())) {
                return r;
            }
        }
        throw new IllegalArgumentException("holdfast.cluster.role must be standalone, master or worker, not '" + s + "'");
    }
}
