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
 * Floods of logins that tried to deny the console to everyone else.
 *
 * <p>Sessions: a viewer with a valid password logs in over and over (successful logins are not
 * throttled) to fill the server's table of console sessions, so that nobody else, the admin
 * included, can log in until the sessions time out. Each user's sessions are capped instead: the
 * flood only ends the flooder's own older sessions.
 *
 * <p>Throttle: an anonymous caller fails logins with user names of up to a megabyte (the body
 * limit), each a new name, from many addresses. The throttle kept a counter per user name for a
 * minute and prunes only at 100,000 keys, so it kept every such name whole: megabytes a minute from
 * one address, until the heap ran out. No user name is longer than 64 characters, so a longer one
 * is counted under its first 65: memory stays small and the throttle still works.
 */
class LoginFloodAttackTest {
    @TempDir
    Path dir;
    CredentialFixture f;
    ConsoleSessions sessions;
    LoginThrottle throttle;
    Logins logins;

    @BeforeEach
    void open() {
        f = new CredentialFixture(dir);
        UserDirectory users = f.users();
        users.create("mallory", Role.VIEWER, "viewer password", "t", "l");
        users.create("boss", Role.ADMIN, "admin password", "t", "l");
        sessions = new ConsoleSessions(Duration.ofHours(12), f.clock);
        throttle = new LoginThrottle(5, f.clock);
        logins = new Logins(users, sessions, throttle, f.clock, f.auditLog);
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

    @Test
    void failedLoginsWithHugeUserNames_keepOnlyBoundedKeys() {
        int attempts = 0;
        for (int address = 0; address < 40; address++) {
            for (int i = 0; i < 5; i++) {
                String name = address + "." + i + "x".repeat(64 * 1024); // a new 64 KiB name each time
                String from = "10.1.0." + address;
                assertThatThrownBy(() -> logins.login(name, "guess", from)).isInstanceOf(AuthenticationFailedException.class);
                attempts++;
            }
        }
        assertThat(attempts).isEqualTo(200);
        assertThat(throttle.keyChars()).as("characters the throttle keeps for 200 failed logins").isLessThan(200 * 100);
        // long names still count against the throttle by name: five from five addresses, the sixth from a fresh one is refused
        String longName = "z" + "x".repeat(80 * 1024);
        for (int k = 0; k < 5; k++) {
            String from = "10.3.0." + k;
            assertThatThrownBy(() -> logins.login(longName + from, "guess", from)).isInstanceOf(AuthenticationFailedException.class);
        }
        assertThatThrownBy(() -> logins.login(longName, "guess", "10.9.9.9")).isInstanceOf(LoginThrottledException.class);
        assertThat(logins.login("boss", "admin password", "10.2.0.1").session().user()).isEqualTo("boss");
    }
}
