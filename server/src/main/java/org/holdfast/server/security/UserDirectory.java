package org.holdfast.server.security;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The users who log in with a password: create, change password or role, disable, delete, and
 * check a password. There is always at least one enabled admin: the last one can be neither
 * deleted, disabled nor demoted. Changes are serialized so that the last-admin rule holds under
 * concurrent requests.
 */
public final class UserDirectory {
    /** The user made at first start and reset by {@code holdfast-server reset-admin}. */
    public static final String ADMIN = "admin";
    /** The longest user name. */
    static final int MAX_NAME_CHARS = 64;
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0," + (MAX_NAME_CHARS - 1) + "}");
    /** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently cut. */
    static final int MAX_PASSWORD_BYTES = 72;
    static final int MIN_PASSWORD_CHARS = 10;

    private final CredentialStore store;
    private final PasswordHasher hasher;
    private final Clock clock;
    private final AuditLog audit;
    private final String dummyHash;
    private volatile Consumer<String> onUserChanged = name -> { };

    public UserDirectory(CredentialStore store, PasswordHasher hasher, Clock clock, AuditLog audit) {
        this.store = Objects.requireNonNull(store);
        this.hasher = Objects.requireNonNull(hasher);
        this.clock = Objects.requireNonNull(clock);
        this.audit = audit == null ? AuditLog.NONE : audit;
        // checked against for unknown users, so that "no such user" takes as long as "wrong password"
        this.dummyHash = hasher.hash(Secrets.randomPassword());
    }

    /** Called with the user's name after a password, role or enabled change or a deletion (ends their sessions). */
    public void onUserChanged(Consumer<String> listener) {
        this.onUserChanged = Objects.requireNonNull(listener);
    }

    public Optional<UserRecord> user(String name) {
        return store.user(name);
    }

    public UserRecord require(String name) {
        return store.user(name).orElseThrow(() -> new UnknownCredentialException("no user named '" + name + "'"));
    }

    public List<UserRecord> list() {
        return store.users();
    }

    /** True if no user exists at all (an empty data directory). */
    public boolean isEmpty() {
        return store.users().isEmpty();
    }

    public synchronized UserRecord create(String name, Role role, String password, String by, String source) {
        checkName(name);
        if (role == null) {
            throw new IllegalArgumentException("role is required: admin, operator or viewer");
        }
        if (role == Role.AGENT || role == Role.WORKER) {
            throw new IllegalArgumentException(role.wireName() + "s authenticate with API tokens, not as users: create "
                    + (role == Role.AGENT ? "an agent" : "a worker") + " token instead");
        }
        checkPassword(password);
        if (store.user(name).isPresent()) {
            throw new CredentialConflictException("a user named '" + name + "' exists already");
        }
        UserRecord u = new UserRecord(name, role, hasher.hash(password), clock.millis(), false);
        store.putUser(u);
        audit.record(new AuditEvent(clock.millis(), by, source, "user.create", "user:" + name, "ok", "role=" + role.wireName()));
        return u;
    }

    /** Changes any of password, role and disabled (null leaves it); ends the user's sessions. */
    public synchronized UserRecord update(String name, String password, Role role, Boolean disabled, String by, String source) {
        if (password == null && role == null && disabled == null) {
            throw new IllegalArgumentException("nothing to change: give password, role and/or disabled");
        }
        UserRecord u = require(name);
        if (password != null) {
            checkPassword(password);
        }
        if (role == Role.AGENT || role == Role.WORKER) {
            throw new IllegalArgumentException("a user cannot have the " + role.wireName() + " role: create "
                    + (role == Role.AGENT ? "an agent" : "a worker") + " token instead");
        }
        boolean losesAdmin = u.role() == Role.ADMIN && !u.disabled()
                && ((role != null && role != Role.ADMIN) || Boolean.TRUE.equals(disabled));
        if (losesAdmin && enabledAdmins() <= 1) {
            throw new CredentialConflictException("'" + name + "' is the last enabled admin: make another admin first");
        }
        UserRecord changed = u;
        StringBuilder detail = new StringBuilder();
        if (password != null) {
            changed = changed.withPasswordHash(hasher.hash(password));
            detail.append("password ");
        }
        if (role != null) {
            changed = changed.withRole(role);
            detail.append("role=").append(role.wireName()).append(' ');
        }
        if (disabled != null) {
            changed = changed.withDisabled(disabled);
            detail.append("disabled=").append(disabled);
        }
        store.putUser(changed);
        audit.record(new AuditEvent(clock.millis(), by, source, "user.update", "user:" + name, "ok", detail.toString().trim()));
        onUserChanged.accept(name);
        return changed;
    }

    public synchronized void delete(String name, String by, String source) {
        UserRecord u = require(name);
        if (u.role() == Role.ADMIN && !u.disabled() && enabledAdmins() <= 1) {
            throw new CredentialConflictException("'" + name + "' is the last enabled admin: make another admin first");
        }
        store.deleteUser(name);
        audit.record(new AuditEvent(clock.millis(), by, source, "user.delete", "user:" + name, "ok", ""));
        onUserChanged.accept(name);
    }

    /**
     * Sets the {@value #ADMIN} user's password, creating the user (or re-enabling it as an admin) if
     * needed. For first start and the offline {@code reset-admin}.
     */
    public synchronized UserRecord resetAdmin(String password, String by) {
        checkPassword(password);
        UserRecord u = store.user(ADMIN)
                .map(x -> new UserRecord(x.name(), Role.ADMIN, hasher.hash(password), x.createdMillis(), false))
                .orElseGet(() -> new UserRecord(ADMIN, Role.ADMIN, hasher.hash(password), clock.millis(), false));
        store.putUser(u);
        audit.record(new AuditEvent(clock.millis(), by, "local", "user.reset-admin", "user:" + ADMIN, "ok", ""));
        onUserChanged.accept(ADMIN);
        return u;
    }

    /**
     * The user if {@code password} is theirs and the account is enabled.
     *
     * @throws AuthenticationFailedException (BAD_PASSWORD) with the same message for an unknown user,
     *                                       a wrong password and a disabled account
     */
    public UserRecord checkPassword(String name, String password) {
        UserRecord u = name == null ? null : store.user(name).orElse(null);
        boolean ok = hasher.matches(password == null ? "" : password, u == null ? dummyHash : u.passwordHash());
        if (u == null || !ok || u.disabled()) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.BAD_PASSWORD,
                    "wrong username or password");
        }
        return u;
    }

    private long enabledAdmins() {
        return store.users().stream().filter(x -> x.role() == Role.ADMIN && !x.disabled()).count();
    }

    private static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("user name must be 1 to 64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
    }

    private static void checkPassword(String password) {
        if (password == null || password.length() < MIN_PASSWORD_CHARS) {
            throw new IllegalArgumentException("password must have at least " + MIN_PASSWORD_CHARS + " characters");
        }
        if (password.getBytes(StandardCharsets.UTF_8).length > MAX_PASSWORD_BYTES) {
            throw new IllegalArgumentException("password must have at most " + MAX_PASSWORD_BYTES + " bytes (UTF-8)");
        }
    }
}
