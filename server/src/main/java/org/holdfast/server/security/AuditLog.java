package org.holdfast.server.security;

/** Where audit entries go: kept durably and also written as one log line each. */
public interface AuditLog {
    /** Drops every entry (for tools and tests that audit nothing). */
    AuditLog NONE = event -> { };

    /** Records {@code event}; never throws for a full audit store without logging it. */
    void record(AuditEvent event);
}
