package org.holdfast.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.holdfast.server.security.AuthenticationFailedException.Reason;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiTokensTest {
    @TempDir
    Path dir;
    CredentialFixture f;
    ApiTokens tokens;

    @BeforeEach
    void open() {
        f = new CredentialFixture(dir);
        tokens = f.tokens();
    }

    @AfterEach
    void close() {
        f.close();
    }

    private ApiTokens.IssuedToken agent(String volumes, Duration lifetime) {
        return tokens.issue(new ApiTokens.TokenRequest("host-1", Role.AGENT, new VolumeScope(List.of(volumes.split(","))), "tenant-a",
                lifetime), "user:admin", "127.0.0.1:1");
    }

    @Test
    void authenticate_issuedToken_givesScopedPrincipal() {
        ApiTokens.IssuedToken t = agent("db1,web-*", null);
        assertThat(t.token()).matches("hft_[0-9a-f]{16}_[A-Za-z0-9_-]{43}");
        AccessPrincipal p = tokens.authenticate(t.token());
        assertThat(p.role()).isEqualTo(Role.AGENT);
        assertThat(p.domain()).isEqualTo("tenant-a");
        assertThat(p.mayReach("db1")).isTrue();
        assertThat(p.mayReach("web-3")).isTrue();
        assertThat(p.mayReach("db2")).isFalse();
        assertThat(p.name()).isEqualTo("token:" + t.record().id() + "(host-1)").doesNotContain(t.token().substring(21));
    }

    @Test
    void authenticate_wrongSecretForKnownId_refusedAsUnknown() {
        ApiTokens.IssuedToken t = agent("db1", null);
        String last = t.token().substring(t.token().length() - 1);
        String wrong = t.token().substring(0, t.token().length() - 1) + (last.equals("A") ? "B" : "A");
        assertThatThrownBy(() -> tokens.authenticate(wrong)).isInstanceOfSatisfying(AuthenticationFailedException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN));
    }

    @Test
    void authenticate_malformedOrMissing_refusedWithReason() {
        for (String s : new String[] {"hft_xyz", "Bearer x", "hft_0123456789abcdef_short"}) {
            assertThatThrownBy(() -> tokens.authenticate(s)).isInstanceOfSatisfying(AuthenticationFailedException.class,
                    e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED));
        }
        assertThatThrownBy(() -> tokens.authenticate("")).isInstanceOfSatisfying(AuthenticationFailedException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.MISSING));
    }

    @Test
    void authenticate_afterRevoke_refusedAtOnce() {
        ApiTokens.IssuedToken t = agent("db1", null);
        tokens.authenticate(t.token());
        tokens.revoke(t.record().id(), "user:admin", "127.0.0.1:1");
        assertThatThrownBy(() -> tokens.authenticate(t.token())).isInstanceOfSatisfying(AuthenticationFailedException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.REVOKED));
        // and a fresh instance on the same store (a restart) agrees: the revocation is durable
        assertThatThrownBy(() -> f.tokens().authenticate(t.token())).isInstanceOf(AuthenticationFailedException.class);
        assertThat(f.audit).extracting(AuditEvent::action).containsExactly("token.create", "token.revoke");
    }

    @Test
    void authenticate_pastExpiry_refusedAsExpired() {
        ApiTokens.IssuedToken t = agent("db1", Duration.ofDays(30));
        f.clock.advance(Duration.ofDays(30).minusSeconds(1));
        tokens.authenticate(t.token());
        f.clock.advance(Duration.ofSeconds(1));
        assertThatThrownBy(() -> tokens.authenticate(t.token())).isInstanceOfSatisfying(AuthenticationFailedException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.EXPIRED));
    }

    @Test
    void authenticate_recordsLastUse_atMostOncePerMinute() {
        ApiTokens.IssuedToken t = agent("db1", null);
        tokens.authenticate(t.token());
        long first = tokens.require(t.record().id()).lastUsedMillis();
        assertThat(first).isEqualTo(f.clock.millis());
        f.clock.advance(Duration.ofSeconds(10));
        tokens.authenticate(t.token());
        assertThat(tokens.require(t.record().id()).lastUsedMillis()).isEqualTo(first);
        f.clock.advance(Duration.ofMinutes(1));
        tokens.authenticate(t.token());
        assertThat(tokens.require(t.record().id()).lastUsedMillis()).isEqualTo(f.clock.millis());
    }

    @Test
    void issue_invalidRequests_refusedAndNothingStored() {
        assertThatThrownBy(() -> tokens.issue(new ApiTokens.TokenRequest("", Role.AGENT, VolumeScope.ALL, null, null), "t", "l"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> tokens.issue(new ApiTokens.TokenRequest("x", Role.VIEWER, new VolumeScope(List.of("db1")), null, null),
                "t", "l")).hasMessageContaining("only agent tokens");
        assertThatThrownBy(() -> tokens.issue(new ApiTokens.TokenRequest("x", Role.AGENT, VolumeScope.ALL, "Bad Domain", null), "t", "l"))
                .hasMessageContaining("dedup domain");
        assertThatThrownBy(() -> tokens.issue(new ApiTokens.TokenRequest("x", Role.AGENT, VolumeScope.ALL, null, Duration.ZERO), "t", "l"))
                .hasMessageContaining("lifetime");
        assertThat(tokens.list()).isEmpty();
    }

    @Test
    void store_keepsOnlyTheHash_secretAbsentFromDatabaseFiles() throws IOException {
        ApiTokens.IssuedToken t = agent("db1", null);
        // the secret is base64url, which has '_' in its alphabet: cut after the id, not at the last '_'
        String prefix = "hft_" + t.record().id() + "_";
        assertThat(t.token()).startsWith(prefix);
        String secret = t.token().substring(prefix.length());
        assertThat(secret).hasSize(43);
        // the id is stored (it is the key); the secret must not be, in any file (WAL, SST, manifest)
        assertThat(containsInFiles(dir, t.record().id())).as("sanity: the id is findable").isTrue();
        f.close();
        assertThat(containsInFiles(dir, secret)).as("secret in the database files").isFalse();
        assertThat(containsInFiles(dir, t.token())).isFalse();
        f = new CredentialFixture(dir);
        assertThat(f.tokens().authenticate(t.token()).role()).isEqualTo(Role.AGENT);
    }

    static boolean containsInFiles(Path dir, String text) throws IOException {
        byte[] needle = text.getBytes(StandardCharsets.US_ASCII);
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.filter(Files::isRegularFile).toList()) {
                byte[] hay = Files.readAllBytes(p);
                outer:
                for (int i = 0; i + needle.length <= hay.length; i++) {
                    for (int j = 0; j < needle.length; j++) {
                        if (hay[i + j] != needle[j]) {
                            continue outer;
                        }
                    }
                    return true;
                }
            }
        }
        return false;
    }

    @Test
    void idOf_tokenText_givesIdOnly() {
        ApiTokens.IssuedToken t = agent("db1", null);
        assertThat(ApiTokens.idOf(t.token())).contains(t.record().id());
        assertThat(ApiTokens.idOf("garbage")).isEmpty();
    }
}
