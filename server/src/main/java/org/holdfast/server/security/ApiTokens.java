package org.holdfast.server.security;

import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Issues, verifies and revokes API tokens.
 *
 * <p>A token reads {@code hft_<id>_<secret>}: {@code id} is 16 hex digits (public, for lookup,
 * listing and audit), {@code secret} 256 random bits as base64url. Only SHA-256 of the whole token
 * text is stored: the secret is high-entropy, so a fast hash is enough (a slow password hash would
 * only cost every request), and the comparison is constant-time ({@link MessageDigest#isEqual}).
 * Every verification reads the stored record, so a revocation takes effect at the next call: no
 * verdict is cached.
 */
public final class ApiTokens implements TokenAuthenticator {
    /** Prefix of every API token. */
    public static final String PREFIX = "hft_";
    private static final Pattern FORMAT = Pattern.compile("hft_([0-9a-f]{16})_([A-Za-z0-9_-]{43})");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._@ :-]{1,64}");
    private static final Pattern DOMAIN = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");
    /** Last-use times are written at most this often per token, so a busy token does not write on every request. */
    private static final long LAST_USED_GRANULARITY_MILLIS = 60_000;

    private final CredentialStore store;
    private final Clock clock;
    private final AuditLog audit;

    public ApiTokens(CredentialStore store, Clock clock, AuditLog audit) {
        this.store = Objects.requireNonNull(store);
        this.clock = Objects.requireNonNull(clock);
        this.audit = audit == null ? AuditLog.NONE : audit;
    }

    /** A token just issued: its record and the full token text, which is shown once and never stored. */
    public record IssuedToken(TokenRecord record, String token) {
        @Override
        public String toString() {
            return "IssuedToken[" + record.id() + "]";
        }
    }

    /** What an admin asks for: a name, a role, the volumes (agent tokens), the dedup domain, an optional lifetime. */
    public record TokenRequest(String name, Role role, VolumeScope scope, String domain, Duration lifetime) {
    }

    /** Issues a new token; {@code creator} is the issuing principal's name, {@code source} where the request came from. */
    public IssuedToken issue(TokenRequest req, String creator, String source) {
        if (req.name() == null || !NAME.matcher(req.name()).matches()) {
            throw new IllegalArgumentException("token name must be 1 to 64 letters, digits, spaces or . _ @ : -");
        }
        if (req.role() == null) {
            throw new IllegalArgumentException("token role is required: admin, operator, viewer, agent or worker");
        }
        VolumeScope scope = req.scope() == null ? VolumeScope.ALL : req.scope();
        if (req.role() != Role.AGENT && !scope.isAll()) {
            throw new IllegalArgumentException("only agent tokens are limited to volumes; leave volumes out for a "
                    + req.role().wireName() + " token");
        }
        String domain = req.domain() == null || req.domain().isEmpty() ? AccessPrincipal.DEFAULT_DOMAIN : req.domain();
        if (!DOMAIN.matcher(domain).matches()) {
            throw new IllegalArgumentException("dedup domain must be 1 to 64 lower-case letters, digits, '.', '_' or '-'");
        }
        if (req.lifetime() != null && (req.lifetime().isNegative() || req.lifetime().isZero())) {
            throw new IllegalArgumentException("token lifetime must be positive (e.g. 30d), or left out for no expiry");
        }
        long now = clock.millis();
        String id;
        do {
            id = Secrets.randomHex(8);
        } while (store.token(id).isPresent());
        String token = PREFIX + id + "_" + Secrets.randomText(32);
        long expires = req.lifetime() == null ? 0 : now + req.lifetime().toMillis();
        TokenRecord r = new TokenRecord(id, req.name(), req.role(), scope, domain, now, expires, 0, 0, creator,
                Secrets.sha256(token));
        store.putToken(r);
        audit.record(new AuditEvent(now, creator, source, "token.create", "token:" + id, "ok",
                "name=" + req.name() + " role=" + req.role().wireName() + " volumes=" + String.join(",", scope.patterns())));
        return new IssuedToken(r, token);
    }

    @Override
    public AccessPrincipal authenticate(String tokenText) {
        return verify(tokenText).principal();
    }

    /** The token's record if {@code tokenText} is a valid, unexpired, unrevoked token. */
    public TokenRecord verify(String tokenText) {
        if (tokenText == null || tokenText.isEmpty()) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MISSING, "no token given");
        }
        var m = FORMAT.matcher(tokenText);
        if (!m.matches()) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MALFORMED,
                    "the token is malformed (API tokens read hft_<16 hex digits>_<43 characters>)");
        }
        String id = m.group(1);
        TokenRecord r = store.token(id).orElse(null);
        if (r == null || !MessageDigest.isEqual(r.secretHash(), Secrets.sha256(tokenText))) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.UNKNOWN,
                    "wrong secret for token " + id + ", or no such token here (deleted, or made by another server): use the"
                            + " token exactly as it was created, the whole line of its token file, or ask an admin for a new one"
                            + " (operations.md, \"Making tokens\")");
        }
        long now = clock.millis();
        if (r.revoked()) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.REVOKED,
                    "token " + id + " was revoked; ask an admin for a new one");
        }
        if (r.expiredAt(now)) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.EXPIRED,
                    "token " + id + " expired; ask an admin for a new one");
        }
        if (now - r.lastUsedMillis() >= LAST_USED_GRANULARITY_MILLIS) {
            touch(id, now);
        }
        return r;
    }

    /** The id inside a token text if it has the token format, else empty (for audit entries; never the secret). */
    public static Optional<String> idOf(String tokenText) {
        if (tokenText == null) {
            return Optional.empty();
        }
        var m = FORMAT.matcher(tokenText);
        return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** Revokes a token at once; revoking a revoked token changes nothing. */
    public synchronized TokenRecord revoke(String id, String by, String source) {
        TokenRecord r = require(id);
        if (r.revoked()) {
            return r;
        }
        TokenRecord revoked = r.withRevoked(clock.millis());
        store.putToken(revoked);
        audit.record(new AuditEvent(revoked.revokedMillis(), by, source, "token.revoke", "token:" + id, "ok", "name=" + r.name()));
        return revoked;
    }

    /** Whether {@code r} has expired by this store's clock (the one {@link #verify} checks with). */
    public boolean expired(TokenRecord r) {
        return r.expiredAt(clock.millis());
    }

    /** The token with {@code id}, revoked or not, if there is one. */
    public Optional<TokenRecord> find(String id) {
        return store.token(id);
    }

    public TokenRecord require(String id) {
        return store.token(id).orElseThrow(() -> new UnknownCredentialException("no token with id '" + id + "'"));
    }

    /** All tokens, newest first. */
    public List<TokenRecord> list() {
        return store.tokens().stream().sorted(Comparator.comparingLong(TokenRecord::createdMillis).reversed()).toList();
    }

    // synchronized with revoke so that a last-use write can never put back a record revoked meanwhile
    private synchronized void touch(String id, long now) {
        store.token(id).filter(t -> !t.revoked()).ifPresent(t -> store.putToken(t.withLastUsed(now)));
    }
}
