package org.holdfast.server.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuthenticationFailedException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.access.AccessDeniedHandler;

/**
 * 401 and 403 as RFC 9457 problem details, written by Spring Security before any controller runs.
 * The detail says why (no credentials, a malformed, unknown, expired or revoked token, a role too
 * low) and what to do, and never repeats the credential.
 */
public final class SecurityProblems implements AuthenticationEntryPoint, AccessDeniedHandler {
    private final ObjectMapper json;

    public SecurityProblems(ObjectMapper json) {
        this.json = json;
    }

    @Override
    public void commence(HttpServletRequest request, HttpServletResponse response, AuthenticationException e) throws IOException {
        Object failure = request.getAttribute(BearerTokenFilter.FAILURE);
        String detail = failure instanceof AuthenticationFailedException f ? f.getMessage()
                : "this endpoint needs 'Authorization: Bearer <token>' with an API token or a session token from POST /api/v1/auth/login";
        response.setHeader("WWW-Authenticate", "Bearer realm=\"holdfast\"");
        write(request, response, HttpStatus.UNAUTHORIZED, ProblemTypes.UNAUTHENTICATED, "Authentication required", detail);
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, AccessDeniedException e) throws IOException {
        AccessPrincipal p = Caller.principal();
        String who = p == null ? "this caller" : "role '" + p.role().wireName() + "'";
        write(request, response, HttpStatus.FORBIDDEN, ProblemTypes.FORBIDDEN, "Forbidden",
                who + " may not " + request.getMethod() + " " + request.getRequestURI() + "; ask an admin for a token with the role it needs");
    }

    private void write(HttpServletRequest request, HttpServletResponse response, HttpStatus status, URI type, String title,
                       String detail) throws IOException {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(status, detail);
        p.setType(type);
        p.setTitle(title);
        p.setInstance(URI.create(request.getRequestURI()));
        response.setStatus(status.value());
        response.setContentType("application/problem+json");
        json.writeValue(response.getOutputStream(), p);
    }
}
