package org.holdfast.server.security;

import java.util.Objects;

/**
 * A console/API user as stored: name, role, password hash (as the {@link PasswordHasher} wrote it,
 * never the password), creation time and whether the account is disabled.
 */
public record UserRecord(String name, Role role, String passwordHash, long createdMillis, boolean disabled) {
    public UserRecord {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(passwordHash, "passwordHash");
    }

    /** What {@link AccessPrincipal#name()} calls this user. */
    public String principalName() {
        return "user:" + name;
    }

    UserRecord withPasswordHash(String hash) {
        return new UserRecord(name, role, hash, createdMillis, disabled);
    }

    UserRecord withRole(Role r) {
        return new UserRecord(name, r, passwordHash, createdMillis, disabled);
    }

    UserRecord withDisabled(boolean d) {
        return new UserRecord(name, role, passwordHash, createdMillis, d);
    }
}
