package org.holdfast.server.api;

import java.util.Arrays;
import java.util.List;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.Role;
import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

/**
 * A request's authenticated {@link AccessPrincipal} as Spring Security sees it. Its authorities are
 * {@code ROLE_<role>} for every role the principal's role includes (admin: admin, operator, viewer),
 * so URL rules can name the least role they need. It holds no credential.
 */
public final class PrincipalAuthentication extends AbstractAuthenticationToken {
    private final AccessPrincipal principal;

    public PrincipalAuthentication(AccessPrincipal principal) {
        super(authorities(principal.role()));
        this.principal = principal;
        setAuthenticated(true);
    }

    static List<GrantedAuthority> authorities(Role role) {
        return Arrays.stream(Role.values()).filter(role::includes)
                .map(r -> (GrantedAuthority) new SimpleGrantedAuthority("ROLE_" + r.name())).toList();
    }

    @Override
    public Object getCredentials() {
        return null;
    }

    @Override
    public AccessPrincipal getPrincipal() {
        return principal;
    }

    @Override
    public String getName() {
        return principal.name();
    }
}
