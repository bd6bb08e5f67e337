package org.holdfast.server.security;

import java.time.Clock;
import java.util.Optional;

/**
 * The role a principal has now, by its name ({@code user:alice}, {@code token:<id>(<name>)}): empty
 * when the user was deleted or disabled, or the token revoked or expired. Lets something issued to
 * a principal earlier (a download link) die with the principal's rights.
 */
public final class PrincipalRoles {
    private final UserDirectory users;
    private final ApiTokens tokens;
    private final Clock clock;

    public PrincipalRoles(UserDirectory users, ApiTokens tokens, Clock clock) {
        this.users = users;
        this.tokens = tokens;
        this.clock = clock;
    }

    /** The principal's role now; empty if it no longer exists or may no longer act. */
    public Optional<Role> current(String principalName) {
        if (principalName.startsWith("user:")) {
            return users.user(principalName.substring("user:".length())).filter(u -> !u.disabled()).map(UserRecord::role);
        }
        int open = principalName.indexOf('(');
        if (principalName.startsWith("token:") && open > 0) {
            try {
                TokenRecord t = tokens.require(principalName.substring("token:".length(), open));
                return t.revoked() || t.expiredAt(clock.millis()) ? Optional.empty() : Optional.of(t.role());
            } catch (UnknownCredentialException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }
}
