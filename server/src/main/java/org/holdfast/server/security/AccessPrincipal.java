package org.holdfast.server.security;

import java.util.Objects;

/**
 * An authenticated caller: a user (logged in with a password) or an API token.
 *
 * @param name   for audit and logs: {@code user:alice} or {@code token:<id>(<token name>)}; never a secret
 * @param role   what it may do
 * @param scope  the volumes it may reach ({@link VolumeScope#ALL} for everything but agent tokens)
 * @param domain the dedup domain (tenant) of volumes an agent token creates; {@code default} otherwise
 */
public record AccessPrincipal(String name, Role role, VolumeScope scope, String domain) {
    /** The dedup domain every volume is in unless an admin says otherwise. */
    public static final String DEFAULT_DOMAIN = "default";

    public AccessPrincipal {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(scope, "scope");
        domain = domain == null || domain.isEmpty() ? DEFAULT_DOMAIN : domain;
    }

    /** The API token's id if this principal is a token ({@code token:<id>(<name>)}), else empty: what a worker is bound to. */
    public String tokenId() {
        int open = name.indexOf('(');
        return name.startsWith("token:") && open > "token:".length() ? name.substring("token:".length(), open) : "";
    }

    /** True if this principal may reach {@code volume} at all (role aside). */
    public boolean mayReach(String volume) {
        return scope.allows(volume);
    }
}
