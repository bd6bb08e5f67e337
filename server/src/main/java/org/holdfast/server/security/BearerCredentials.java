package org.holdfast.server.security;

import java.util.Objects;

/**
 * What an HTTP {@code Authorization: Bearer} value may be: a console session token ({@code hfs_})
 * or an API token ({@code hft_}). Anything else is malformed.
 */
public final class BearerCredentials {
    private final ConsoleSessions sessions;
    private final ApiTokens tokens;

    public BearerCredentials(ConsoleSessions sessions, ApiTokens tokens) {
        this.sessions = Objects.requireNonNull(sessions);
        this.tokens = Objects.requireNonNull(tokens);
    }

    /** @throws AuthenticationFailedException with the reason, never echoing the credential */
    public AccessPrincipal authenticate(String bearer) {
        if (bearer == null || bearer.isEmpty()) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MISSING, "no credentials given");
        }
        if (bearer.startsWith(ConsoleSessions.PREFIX)) {
            return sessions.authenticate(bearer);
        }
        if (bearer.startsWith(ApiTokens.PREFIX)) {
            return tokens.authenticate(bearer);
        }
        throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MALFORMED,
                "the bearer token is malformed: use an API token (hft_...) or a session token from POST /api/v1/auth/login");
    }
}
