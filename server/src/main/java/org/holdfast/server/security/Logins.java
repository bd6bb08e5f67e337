package org.holdfast.server.security;

import java.time.Clock;
import java.util.Objects;

/**
 * A password login: throttle check, password check, a console session, and an audit entry either
 * way (never with the password).
 */
public final class Logins {
    private final UserDirectory users;
    private final ConsoleSessions sessions;
    private final LoginThrottle throttle;
    private final Clock clock;
    private final AuditLog audit;

    public Logins(UserDirectory users, ConsoleSessions sessions, LoginThrottle throttle, Clock clock, AuditLog audit) {
        this.users = Objects.requireNonNull(users);
        this.sessions = Objects.requireNonNull(sessions);
        this.throttle = Objects.requireNonNull(throttle);
        this.clock = Objects.requireNonNull(clock);
        this.audit = audit == null ? AuditLog.NONE : audit;
    }

    /** Opens a session; {@code source} is both the throttled address and the audited source. */
    public ConsoleSessions.OpenedSession login(String user, String password, String source) {
        return login(user, password, source, source);
    }

    /**
     * Opens a session for {@code user} if the password is right. Failures count against
     * {@code address} (the peer's address without its port: a port changes with every connection,
     * so counting {@code address:port} would never throttle a guesser); {@code source} is what the
     * audit entry names.
     *
     * @throws LoginThrottledException       while the user or the address has too many recent failures
     * @throws AuthenticationFailedException if the name or password is wrong
     */
    public ConsoleSessions.OpenedSession login(String user, String password, String address, String source) {
        String who = user == null ? "" : user;
        try {
            throttle.check(who, address);
        } catch (LoginThrottledException e) {
            audit.record(new AuditEvent(clock.millis(), "user:" + who, source, "login", "user:" + who, "denied", "throttled"));
            throw e;
        }
        UserRecord u;
        try {
            u = users.checkPassword(who, password);
        } catch (AuthenticationFailedException e) {
            throttle.failed(who, address);
            audit.record(new AuditEvent(clock.millis(), "user:" + who, source, "login", "user:" + who, "denied", "wrong username or password"));
            throw e;
        }
        throttle.succeeded(who);
        ConsoleSessions.OpenedSession s = sessions.open(u);
        audit.record(new AuditEvent(clock.millis(), u.principalName(), source, "login", "user:" + who, "ok", ""));
        return s;
    }

    /** Ends the session of {@code token} (no-op for other credentials). */
    public void logout(AccessPrincipal who, String token, String source) {
        if (sessions.close(token)) {
            audit.record(new AuditEvent(clock.millis(), who.name(), source, "logout", who.name(), "ok", ""));
        }
    }
}
