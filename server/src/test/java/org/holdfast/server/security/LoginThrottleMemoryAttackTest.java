package org.holdfast.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An anonymous caller fails logins with user names of up to a megabyte (the body limit), each a
 * new name, from many addresses. The throttle keeps a counter per user name for a minute and
 * prunes only at 100,000 keys, so it kept every such name whole: a few megabytes a minute from one
 * address, gigabytes within hours, until the server ran out of heap. No user name is longer than
 * 64 characters, so a longer one is counted under its first 65: memory stays small and the
 * throttle still works.
 */
class LoginThrottleMemoryAttackTest {
    @TempDir
    Path dir;
    CredentialFixture f;
    LoginThrottle throttle;
    Logins logins;

    @BeforeEach
    void open() {
        f = new CredentialFixture(dir);
        UserDirectory users = f.users();
        users.create("alice", Role.OPERATOR, "correct horse", "t", "l");
        throttle = new LoginThrottle(5, f.clock);
        logins = new Logins(users, new ConsoleSessions(Duration.ofHours(12), f.clock), throttle, f.clock, f.auditLog);
    }

    @AfterEach
    void close() {
        f.close();
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
        assertThat(logins.login("alice", "correct horse", "10.2.0.1").session().user()).isEqualTo("alice");
    }
}
