package org.holdfast.server.cluster;

import java.util.Locale;

/** How the master sees a worker now. */
public enum MemberState {
    /** Connected, heartbeats on time. */
    UP,
    /** Connected, but no heartbeat for longer than {@code late-after}. */
    LATE,
    /** Connection gone, or no heartbeat for longer than {@code lost-after}; its range waits for it to come back. */
    LOST;

    /** Lower-case name as in the API. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
