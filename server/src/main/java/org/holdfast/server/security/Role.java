package org.holdfast.server.security;

import java.util.Locale;

/** A principal's role. Admin includes operator, operator includes viewer; agent and worker stand apart. */
public enum Role {
    /** Everything, including users and tokens. */
    ADMIN,
    /** Volumes, policies, holds, deletions, GC, verify, restore. */
    OPERATOR,
    /** Read-only. */
    VIEWER,
    /** Backup, restore and list its own volumes over the ingest port; read-only over REST for them. */
    AGENT,
    /** A worker node registering with the master over the cluster port (master/worker mode); nothing else. */
    WORKER;

    /** True if this role may do what {@code other} may (agent and worker include only themselves). */
    public boolean includes(Role other) {
        if (this == other) {
            return true;
        }
        return switch (this) {
            case ADMIN -> other != AGENT && other != WORKER;
            case OPERATOR -> other == VIEWER;
            default -> false;
        };
    }

    /** Lower-case name as used in the API and config ({@code admin}, ...). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code admin|operator|viewer|agent|worker}, any case. */
    public static Role parse(String s) {
        if (s != null) {
            for (Role r : values()) {
                if (r.name().equalsIgnoreCase(s.trim())) {
                    return r;
                }
            }
        }
        throw new IllegalArgumentException("unknown role '" + s + "': use admin, operator, viewer, agent or worker");
    }
}
