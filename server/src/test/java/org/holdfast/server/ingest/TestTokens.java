package org.holdfast.server.ingest;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuthenticationFailedException;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.TokenAuthenticator;
import org.holdfast.server.security.VolumeScope;

/** An in-memory token store for in-process tests: secrets mapped to principals, revocable. Never caches a verdict. */
public final class TestTokens implements TokenAuthenticator {
    /** The secret of an agent token that reaches every volume of the default domain; what {@link AgentDriver} sends unless told. */
    public static final String DEFAULT_AGENT = "test-agent-token-0123456789";

    private final Map<String, AccessPrincipal> tokens = new ConcurrentHashMap<>();
    private final Set<String> revoked = ConcurrentHashMap.newKeySet();

    public TestTokens() {
        add(DEFAULT_AGENT, new AccessPrincipal("token:1(test agent)", Role.AGENT, VolumeScope.ALL, null));
    }

    /** Adds a token. */
    public TestTokens add(String secret, AccessPrincipal principal) {
        tokens.put(secret, principal);
        return this;
    }

    /** Revokes a token: refused from the next authentication on. */
    public void revoke(String secret) {
        revoked.add(secret);
    }

    @Override
    public AccessPrincipal authenticate(String tokenSecret) {
        if (revoked.contains(tokenSecret)) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.REVOKED, "the token was revoked");
        }
        AccessPrincipal p = tokens.get(tokenSecret);
        if (p == null) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.UNKNOWN, "unknown token");
        }
        return p;
    }
}
