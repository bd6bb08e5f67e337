package org.holdfast.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A viewer with a valid password logs in over and over (successful logins are not throttled) to
 * fill the server's table of console sessions, so that nobody else, the admin included, can log
 * in until the sessions time out. Each user's sessions are capped instead: the flood only ends
 * the flooder's own older sessions.
 */
class ConsoleSessionFloodAttackTest {
    @TempDir
    Path dir;
    CredentialFixture f;
    ConsoleSessions sessions;
    Logins logins;

    @BeforeEach
    void open() {
        f = new CredentialFixture(dir);
        UserDirectory users = f.users();
        users.create("mallory", Role.VIEWER, "viewer password", "t", "l");
        users.create("boss", Role.ADMIN, "admin password", "t", "l");
        sessions = new ConsoleSessions(Duration.ofHours(12), f.clock);
        logins = new Logins(users, sessions, new LoginThrottle(5, f.clock), f.clock, f.auditLog);
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void viewerLogsInTenThousandTimes_adminCanStillLogIn_andTheViewerKeepsOnlyItsNewestSessions() {
        ConsoleSessions.OpenedSession bossBefore = logins.login("boss", "admin password", "10.0.0.1");
        List<String> flood = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            flood.add(logins.login("mallory", "viewer password", "10.0.0.66").token());
        }

        ConsoleSessions.OpenedSession boss = logins.login("boss", "admin password", "10.0.0.1");
        assertThat(sessions.authenticate(boss.token()).role()).isEqualTo(Role.ADMIN);
        assertThat(sessions.authenticate(bossBefore.token()).name()).as("another user's session is not ended by the flood")
                .isEqualTo("user:boss");
        int cap = ConsoleSessions.MAX_SESSIONS_PER_USER;
        for (String newest : flood.subList(flood.size() - cap, flood.size())) {
            assertThat(sessions.authenticate(newest).name()).isEqualTo("user:mallory");
        }
        assertThatThrownBy(() -> sessions.authenticate(flood.get(flood.size() - cap - 1)))
                .as("the flooder's oldest sessions are ended").isInstanceOfSatisfying(AuthenticationFailedException.class,
                        e -> assertThat(e.reason()).isEqualTo(AuthenticationFailedException.Reason.UNKNOWN));
        assertThat(sessions.size()).isEqualTo(cap + 2);
    }
}
