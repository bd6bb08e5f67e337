package org.holdfast.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UserDirectoryTest {
    @TempDir
    Path dir;
    CredentialFixture f;
    UserDirectory users;

    @BeforeEach
    void open() {
        f = new CredentialFixture(dir);
        users = f.users();
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void ensure_emptyStore_createsAdminAndPasswordFileMode0600() throws Exception {
        Path file = InitialAdmin.ensure(users, dir);
        assertThat(file).isEqualTo(dir.resolve(InitialAdmin.FILE));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        String password = Files.readString(file).strip();
        assertThat(password).hasSize(24);
        assertThat(users.checkPassword("admin", password).role()).isEqualTo(Role.ADMIN);
        // second start: users exist, nothing is touched
        assertThat(InitialAdmin.ensure(users, dir)).isNull();
        assertThat(Files.readString(file).strip()).isEqualTo(password);
    }

    @Test
    void reset_existingAdmin_newPasswordOldOneRefused() throws Exception {
        InitialAdmin.ensure(users, dir);
        String old = Files.readString(dir.resolve(InitialAdmin.FILE)).strip();
        InitialAdmin.reset(users, dir, "local");
        String fresh = Files.readString(dir.resolve(InitialAdmin.FILE)).strip();
        assertThat(fresh).isNotEqualTo(old);
        users.checkPassword("admin", fresh);
        assertThatThrownBy(() -> users.checkPassword("admin", old)).isInstanceOf(AuthenticationFailedException.class);
    }

    @Test
    void forgetIfStale_keptWhileItOpens_deletedOnceTheAdminPasswordChanged() throws Exception {
        InitialAdmin.ensure(users, dir);
        Path file = dir.resolve(InitialAdmin.FILE);
        assertThat(InitialAdmin.forgetIfStale(users, dir)).as("still the admin's password").isFalse();
        users.update("admin", null, null, false, "t", "l"); // a change that is not the password
        assertThat(InitialAdmin.forgetIfStale(users, dir)).isFalse();
        assertThat(file).exists();
        users.update("admin", "a password of my own", null, null, "t", "l");
        assertThat(InitialAdmin.forgetIfStale(users, dir)).isTrue();
        assertThat(file).doesNotExist();
        assertThat(InitialAdmin.forgetIfStale(users, dir)).as("nothing left to delete").isFalse();
        // reset-admin writes a new one, which is the admin's password again: kept
        InitialAdmin.reset(users, dir, "local");
        assertThat(InitialAdmin.forgetIfStale(users, dir)).isFalse();
        assertThat(file).exists();
    }

    @Test
    void checkPassword_unknownUserWrongPasswordDisabled_sameMessage() {
        users.create("alice", Role.OPERATOR, "correct horse", "t", "l");
        users.create("bob", Role.VIEWER, "correct horse", "t", "l");
        users.create("root2", Role.ADMIN, "correct horse", "t", "l");
        users.update("bob", null, null, true, "t", "l");
        String a = message(() -> users.checkPassword("nobody", "correct horse"));
        String b = message(() -> users.checkPassword("alice", "wrong horse!"));
        String c = message(() -> users.checkPassword("bob", "correct horse"));
        assertThat(a).isEqualTo(b).isEqualTo(c).isEqualTo("wrong username or password");
        assertThat(users.checkPassword("alice", "correct horse").role()).isEqualTo(Role.OPERATOR);
    }

    private static String message(Runnable r) {
        try {
            r.run();
        } catch (AuthenticationFailedException e) {
            assertThat(e.reason()).isEqualTo(AuthenticationFailedException.Reason.BAD_PASSWORD);
            return e.getMessage();
        }
        throw new AssertionError("not refused");
    }

    @Test
    void deleteOrDemote_lastAdmin_refusedAndNothingChanged() {
        users.create("root", Role.ADMIN, "0123456789", "t", "l");
        assertThatThrownBy(() -> users.delete("root", "t", "l")).isInstanceOf(CredentialConflictException.class);
        assertThatThrownBy(() -> users.update("root", null, Role.VIEWER, null, "t", "l")).isInstanceOf(CredentialConflictException.class);
        assertThatThrownBy(() -> users.update("root", null, null, true, "t", "l")).isInstanceOf(CredentialConflictException.class);
        assertThat(users.require("root").role()).isEqualTo(Role.ADMIN);
        assertThat(users.require("root").disabled()).isFalse();
        users.create("root2", Role.ADMIN, "0123456789", "t", "l");
        users.update("root", null, Role.OPERATOR, null, "t", "l");
        assertThatThrownBy(() -> users.delete("root2", "t", "l")).isInstanceOf(CredentialConflictException.class);
        users.delete("root", "t", "l");
        assertThat(users.user("root")).isEmpty();
    }

    @Test
    void create_invalidInput_refusedAndNothingStored() {
        assertThatThrownBy(() -> users.create("Bad Name", Role.VIEWER, "0123456789", "t", "l")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> users.create("short", Role.VIEWER, "123", "t", "l")).hasMessageContaining("at least");
        assertThatThrownBy(() -> users.create("long", Role.VIEWER, "x".repeat(73), "t", "l")).hasMessageContaining("at most 72");
        assertThatThrownBy(() -> users.create("agent", Role.AGENT, "0123456789", "t", "l")).hasMessageContaining("API tokens");
        assertThat(users.list()).isEmpty();
        users.create("dup", Role.VIEWER, "0123456789", "t", "l");
        assertThatThrownBy(() -> users.create("dup", Role.ADMIN, "0123456789", "t", "l")).isInstanceOf(CredentialConflictException.class);
        assertThat(users.require("dup").role()).isEqualTo(Role.VIEWER);
    }

    @Test
    void update_endsTheUsersSessions() {
        ConsoleSessions sessions = new ConsoleSessions(java.time.Duration.ofHours(1), f.clock);
        users.onUserChanged(sessions::closeAll);
        UserRecord alice = users.create("alice", Role.OPERATOR, "0123456789", "t", "l");
        String token = sessions.open(alice).token();
        assertThat(sessions.authenticate(token).role()).isEqualTo(Role.OPERATOR);
        users.update("alice", null, Role.VIEWER, null, "t", "l");
        assertThatThrownBy(() -> sessions.authenticate(token)).isInstanceOf(AuthenticationFailedException.class);
    }
}
