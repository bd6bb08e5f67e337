package org.holdfast.server.security;

/**
 * Turns an API token's secret into the principal it stands for. Revocation and expiry take effect
 * at the next call: implementations do not cache a verdict.
 */
public interface TokenAuthenticator {

    /**
     * The token's principal.
     *
     * @throws AuthenticationFailedException if the token is missing, malformed, unknown, expired or revoked
     */
    AccessPrincipal authenticate(String tokenSecret);
}
