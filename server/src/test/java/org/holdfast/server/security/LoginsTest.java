package org.holdfast.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoginsTest {
    @TempDir
    Path dir;
    CredentialFixture f;
    ConsoleSessions sessions;
    Logins logins;

    @BeforeEach
    void open() {
        f = new CredentialFixture(dir);
        UserDirectory users = f.users();
        users.create("alice", Role.OPERATOR, "correct horse", "t", "l");
        sessions = new ConsoleSessions(Duration.ofHours(12), f.clock);
        logins = new Logins(users, sessions, new LoginThrottle(3, f.clock), f.clock, f.auditLog);
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void login_rightPassword_sessionUntilTimeout() {
        ConsoleSessions.OpenedSession s = logins.login("alice", "correct horse", "10.0.0.1:5");
        assertThat(s.token()).startsWith("hfs_");
        assertThat(sessions.authenticate(s.token()).name()).isEqualTo("user:alice");
        f.clock.advance(Duration.ofHours(12).minusMillis(1));
        sessions.authenticate(s.token());
        f.clock.advance(Duration.ofMillis(1));
        assertThatThrownBy(() -> sessions.authenticate(s.token())).isInstanceOfSatisfying(AuthenticationFailedException.class,
                e -> assertThat(e.reason()).isEqualTo(AuthenticationFailedException.Reason.EXPIRED));
        // the console asks several things at once: every one of them hears "expired"
        assertThatThrownBy(() -> sessions.authenticate(s.token())).isInstanceOfSatisfying(AuthenticationFailedException.class,
                e -> assertThat(e.reason()).isEqualTo(AuthenticationFailedException.Reason.EXPIRED));
    }

    @Test
    void logout_endsSessionAtOnce() {
        ConsoleSessions.OpenedSession s = logins.login("alice", "correct horse", "10.0.0.1:5");
        logins.logout(sessions.authenticate(s.token()), s.token(), "10.0.0.1:5");
        assertThatThrownBy(() -> sessions.authenticate(s.token())).isInstanceOf(AuthenticationFailedException.class);
    }

    @Test
    void login_tooManyFailuresPerUser_throttledThenAllowedAfterAMinute() {
        for (int i = 0; i < 3; i++) {
            String addr = "10.0.0." + i;
            assertThatThrownBy(() -> logins.login("alice", "wrong", addr)).isInstanceOf(AuthenticationFailedException.class);
        }
        // even the right password is refused while throttled: a guesser learns nothing
        assertThatThrownBy(() -> logins.login("alice", "correct horse", "10.0.0.9"))
                .isInstanceOfSatisfying(LoginThrottledException.class, e -> assertThat(e.retryAfter()).isPositive()
                        .isLessThanOrEqualTo(Duration.ofMinutes(1)));
        f.clock.advance(Duration.ofMinutes(1));
        assertThat(logins.login("alice", "correct horse", "10.0.0.9").token()).startsWith("hfs_");
    }

    @Test
    void login_tooManyFailuresPerAddress_throttlesOtherUsersFromIt() {
        for (String u : new String[] {"a1", "a2", "a3"}) {
            assertThatThrownBy(() -> logins.login(u, "wrong", "10.0.0.7")).isInstanceOf(AuthenticationFailedException.class);
        }
        assertThatThrownBy(() -> logins.login("alice", "correct horse", "10.0.0.7")).isInstanceOf(LoginThrottledException.class);
        assertThat(logins.login("alice", "correct horse", "10.0.0.8").token()).startsWith("hfs_");
    }

    @Test
    void login_audited_neverWithThePassword() {
        assertThatThrownBy(() -> logins.login("alice", "wrong-secret-xyz", "10.0.0.1:5")).isInstanceOf(AuthenticationFailedException.class);
        logins.login("alice", "correct horse", "10.0.0.1:5");
        assertThat(f.audit.stream().filter(e -> e.action().equals("login")).toList()).extracting(AuditEvent::action, AuditEvent::result)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("login", "denied"), org.assertj.core.groups.Tuple.tuple("login", "ok"));
        assertThat(f.audit.toString()).doesNotContain("wrong-secret-xyz").doesNotContain("correct horse");
    }
}
