package org.holdfast.server.ingest;

import java.util.EnumSet;
import java.util.Set;
import org.holdfast.server.security.Role;

/**
 * What a principal may ask for on the ingest port, and which roles may ask it (docs/protocol.md,
 * "Authorization"). Backup writes: agents (their own volumes) and admins. Restore reads content:
 * agents, operators and admins. Listing shows only sequence numbers and sizes: every role,
 * viewers included, but a worker (its token only registers on the cluster port). The volume scope applies on top of the role.
 */
enum IngestAction {
    BACKUP("backup.begin", "back up", EnumSet.of(Role.AGENT, Role.ADMIN)),
    RESTORE("snapshot.restore", "restore", EnumSet.of(Role.AGENT, Role.OPERATOR, Role.ADMIN)),
    LIST("snapshot.list", "list the snapshots of", EnumSet.complementOf(EnumSet.of(Role.WORKER))),
    /** A daemon reports how a run of its backup of the volume ended: whoever may back it up. */
    REPORT_RUN("agent.run-report", "report runs of", EnumSet.of(Role.AGENT, Role.ADMIN));

    final String auditAction;
    final String verb;
    private final Set<Role> roles;

    IngestAction(String auditAction, String verb, Set<Role> roles) {
        this.auditAction = auditAction;
        this.verb = verb;
        this.roles = roles;
    }

    boolean allows(Role role) {
        return roles.contains(role);
    }
}
