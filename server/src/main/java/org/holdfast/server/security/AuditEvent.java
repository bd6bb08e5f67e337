package org.holdfast.server.security;

import java.util.Objects;

/**
 * One audit entry: who did what to which target, from where, and how it ended. Never holds a
 * secret (no passwords, no token secrets).
 *
 * @param timeMillis epoch milliseconds
 * @param principal  {@link AccessPrincipal#name()}, or {@code anonymous}
 * @param source     the caller's address ({@code 127.0.0.1:53122}), or {@code local} for offline tools
 * @param action     a stable dotted name, e.g. {@code volume.delete}, {@code snapshot.commit}, {@code login}
 * @param target     what it acted on, e.g. {@code volume:db1} or {@code volume:db1@7}; empty if none
 * @param result     {@code ok}, {@code denied}, {@code failed} or {@code conflict}
 * @param detail     a short explanation (the refusal reason, a count); empty if none
 */
public record AuditEvent(long timeMillis, String principal, String source, String action, String target,
                         String result, String detail) {
    public AuditEvent {
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(action, "action");
        source = source == null ? "" : source;
        target = target == null ? "" : target;
        result = result == null ? "ok" : result;
        detail = detail == null ? "" : detail;
    }
}
