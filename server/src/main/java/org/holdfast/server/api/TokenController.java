package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.util.List;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Lifetimes;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.TokenRecord;
import org.holdfast.server.security.VolumeScope;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** API tokens (admin only): issue (the secret is in that one answer only), list without secrets, revoke. */
@RestController
public class TokenController {
    private final ApiTokens tokens;

    public TokenController(ApiTokens tokens) {
        this.tokens = tokens;
    }

    /** A token without its secret; {@code state} is active, expired or revoked. */
    public record TokenView(String id, String name, String role, List<String> volumes, String domain, Instant createdAt,
                            Instant expiresAt, Instant revokedAt, Instant lastUsedAt, String creator, String state) {
        static TokenView of(TokenRecord t, long now) {
            return new TokenView(t.id(), t.name(), t.role().wireName(), t.scope().patterns(), t.domain(),
                    Instant.ofEpochMilli(t.createdMillis()), instant(t.expiresMillis()), instant(t.revokedMillis()),
                    instant(t.lastUsedMillis()), t.creator(), t.revoked() ? "revoked" : t.expiredAt(now) ? "expired" : "active");
        }

        private static Instant instant(long millis) {
            return millis == 0 ? null : Instant.ofEpochMilli(millis);
        }
    }

    /** What to issue: volumes only for agent tokens (names or patterns; default every volume), expiresIn like {@code 30d}. */
    public record CreateToken(String name, String role, List<String> volumes, String domain, String expiresIn) {
    }

    /** The answer to an issue: the token (shown this once) and its record. */
    public record IssuedTokenView(String token, TokenView info) {
    }

    @GetMapping("/api/v1/tokens")
    public List<TokenView> list() {
        long now = System.currentTimeMillis();
        return tokens.list().stream().map(t -> TokenView.of(t, now)).toList();
    }

    @Audited(value = "token.create", byHandler = true)
    @PostMapping("/api/v1/tokens")
    public ResponseEntity<IssuedTokenView> issue(@RequestBody(required = false) CreateToken body, HttpServletRequest request) {
        if (body == null || body.role() == null) {
            throw new IllegalArgumentException("body must be {\"name\": \"...\", \"role\": \"agent|worker|viewer|operator|admin\", "
                    + "\"volumes\": [\"db1\", \"web-*\"], \"domain\": \"default\", \"expiresIn\": \"30d\"} (volumes, domain, expiresIn optional)");
        }
        VolumeScope scope = body.volumes() == null || body.volumes().isEmpty() ? VolumeScope.ALL : new VolumeScope(body.volumes());
        ApiTokens.IssuedToken t = tokens.issue(new ApiTokens.TokenRequest(body.name(), Role.parse(body.role()), scope, body.domain(),
                body.expiresIn() == null ? null : Lifetimes.parse(body.expiresIn())), Caller.require().name(), Caller.source(request));
        return ResponseEntity.status(HttpStatus.CREATED).body(new IssuedTokenView(t.token(), TokenView.of(t.record(), System.currentTimeMillis())));
    }

    @GetMapping("/api/v1/tokens/{id}")
    public TokenView get(@PathVariable String id) {
        return TokenView.of(tokens.require(id), System.currentTimeMillis());
    }

    /** Revokes the token at once: the next request or agent connection with it is refused. */
    @Audited(value = "token.revoke", byHandler = true)
    @DeleteMapping("/api/v1/tokens/{id}")
    public TokenView revoke(@PathVariable String id, HttpServletRequest request) {
        return TokenView.of(tokens.revoke(id, Caller.require().name(), Caller.source(request)), System.currentTimeMillis());
    }
}
