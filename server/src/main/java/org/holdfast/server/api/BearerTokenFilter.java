package org.holdfast.server.api;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Clock;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.AuthenticationFailedException;
import org.holdfast.server.security.BearerCredentials;
import org.holdfast.server.security.ConsoleSessions;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Reads {@code Authorization: Bearer <token>} and, if the token is good, makes its principal the
 * request's authentication. A bad token leaves the request anonymous and notes why (for the 401
 * problem detail, see {@link SecurityProblems}), and is audited with the reason, the source and
 * the token id when the text has one; never with the secret. Open endpoints (health, login) still
 * answer: a stale token in a script must not break a health check.
 */
public final class BearerTokenFilter extends OncePerRequestFilter {
    /** Request attribute holding the {@link AuthenticationFailedException} of a refused credential. */
    static final String FAILURE = BearerTokenFilter.class.getName() + ".failure";

    private final BearerCredentials credentials;
    private final AuditLog audit;
    private final Clock clock;

    public BearerTokenFilter(BearerCredentials credentials, AuditLog audit, Clock clock) {
        this.credentials = credentials;
        this.audit = audit;
        this.clock = clock;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String header = request.getHeader("Authorization");
        if (header != null) {
            String token = Caller.bearer(request);
            try {
                if (token == null) {
                    throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MALFORMED,
                            "the Authorization header must read 'Bearer <token>'");
                }
                PrincipalAuthentication auth = new PrincipalAuthentication(credentials.authenticate(token));
                SecurityContext ctx = SecurityContextHolder.getContextHolderStrategy().createEmptyContext();
                ctx.setAuthentication(auth);
                SecurityContextHolder.getContextHolderStrategy().setContext(ctx);
            } catch (AuthenticationFailedException e) {
                request.setAttribute(FAILURE, e);
                String target = token != null && token.startsWith(ConsoleSessions.PREFIX) ? "session"
                        : ApiTokens.idOf(token).map(id -> "token:" + id).orElse("");
                audit.record(new AuditEvent(clock.millis(), "anonymous", Caller.source(request), "auth.token", target, "denied",
                        e.reason().name().toLowerCase(java.util.Locale.ROOT) + ": " + request.getMethod() + " " + request.getRequestURI()));
            }
        }
        chain.doFilter(request, response);
    }
}
