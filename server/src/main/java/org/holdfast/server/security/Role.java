package org.holdfast.server.security;

import java.util.Locale;

/** A principal's role. Admin includes operator, operator includes viewer; agent stands apart. */
public enum Role {
    /** Everything, including users and tokens. */
    ADMIN,
    /** Volumes, policies, holds, deletions, GC, verify, restore. */
    OPERATOR,
    /** Read-only. */
    VIEWER,
    /** Backup, restore and list its own volumes over the ingest port; read-only over REST for them. */
    AGENT;

    /** True if this role may do what {@code other} may (agent includes only itself). */
    public boolean includes(Role other) {
        if (this == other) {
            return true;
        }
        return switch (this) {
            case ADMIN -> other != AGENT;
            case OPERATOR -> other == VIEWER;
            default -> false;
        };
    }

    /** Lower-case name as used in the API and config ({@code admin}, ...). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code admin|operator|viewer|agent}, any case. */
    public static Role parse(String s) {
        if (s != null) {
            for (Role r : values()) {
                if (r.name().equalsIgnoreCase(s.trim())) {
                    return r;
                }
            }
        }
        throw new IllegalArgumentException("unknown role '" + s + "': use admin, operator, viewer or agent");
    }
}
