package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.util.List;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.ConsoleSessions;
import org.holdfast.server.security.Logins;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Password login for the console (a session token), logout, and who the caller is. */
@RestController
public class AuthController {
    private final Logins logins;

    public AuthController(Logins logins) {
        this.logins = logins;
    }

    /** Login body. */
    public record LoginRequest(String username, String password) {
        @Override
        public String toString() {
            return "LoginRequest[" + username + "]";
        }
    }

    /** A session: its bearer token (send as {@code Authorization: Bearer}), when it ends, whose it is. */
    public record LoginResponse(String token, Instant expiresAt, String username, String role) {
    }

    /** The caller: principal name, kind (user or token), role, reachable volumes, dedup domain. */
    public record Me(String principal, String kind, String role, List<String> volumes, String domain) {
    }

    @Audited(value = "login", byHandler = true)
    @PostMapping("/api/v1/auth/login")
    public LoginResponse login(@RequestBody(required = false) LoginRequest body, HttpServletRequest request) {
        if (body == null || body.username() == null || body.username().isBlank() || body.password() == null) {
            throw new IllegalArgumentException("body must be {\"username\": \"...\", \"password\": \"...\"}");
        }
        ConsoleSessions.OpenedSession s = logins.login(body.username(), body.password(), Caller.address(request),
                Caller.source(request));
        return new LoginResponse(s.token(), Instant.ofEpochMilli(s.session().expiresMillis()), s.session().user(),
                s.session().role().wireName());
    }

    /** Ends the caller's console session; with an API token it does nothing (revoke tokens with DELETE /api/v1/tokens/{id}). */
    @Audited(value = "logout", byHandler = true)
    @PostMapping("/api/v1/auth/logout")
    public ResponseEntity<Void> logout(HttpServletRequest request) {
        logins.logout(Caller.require(), Caller.bearer(request), Caller.source(request));
        return ResponseEntity.noContent().build();
    }

    @GetMapping("/api/v1/auth/me")
    public Me me() {
        AccessPrincipal p = Caller.require();
        return new Me(p.name(), p.name().startsWith("user:") ? "user" : "token", p.role().wireName(), p.scope().patterns(), p.domain());
    }
}
