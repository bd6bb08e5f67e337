package org.holdfast.server.security;

import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The session tokens that a password login hands out ({@code hfs_<43 characters>}), kept in memory
 * only: a restart logs every console user out, which is the safe direction. Keyed by the token's
 * SHA-256, so the map holds no usable secret. A session ends at its fixed expiry (login time plus
 * the timeout), at logout, or when its user's password, role or account changes.
 */
public final class ConsoleSessions {
    /** Prefix of every session token. */
    public static final String PREFIX = "hfs_";
    private static final int MAX_SESSIONS = 10_000;

    /** How long an expired session is still answered as expired rather than unknown. */
    private static final long EXPIRED_KEPT_MILLIS = Duration.ofDays(1).toMillis();

    private final Duration timeout;
    private final Clock clock;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    /** A live session: whose it is and until when. */
    public record Session(String user, Role role, long expiresMillis) {
    }

    /** A session just opened, with its token (given to the client once). */
    public record OpenedSession(String token, Session session) {
        @Override
        public String toString() {
            return "OpenedSession[" + session.user() + "]";
        }
    }

    public ConsoleSessions(Duration timeout, Clock clock) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("holdfast.security.session-timeout must be positive");
        }
        this.timeout = timeout;
        this.clock = Objects.requireNonNull(clock);
    }

    public OpenedSession open(UserRecord user) {
        long now = clock.millis();
        sessions.values().removeIf(s -> s.expiresMillis() + EXPIRED_KEPT_MILLIS <= now);
        if (sessions.size() >= MAX_SESSIONS) {
            sessions.values().removeIf(s -> s.expiresMillis() <= now);
            if (sessions.size() >= MAX_SESSIONS) {
                throw new IllegalStateException("too many console sessions open (" + MAX_SESSIONS + "); log some out");
            }
        }
        String token = PREFIX + Secrets.randomText(32);
        Session s = new Session(user.name(), user.role(), now + timeout.toMillis());
        sessions.put(key(token), s);
        return new OpenedSession(token, s);
    }

    /** The principal of a live session. */
    public AccessPrincipal authenticate(String token) {
        Session s = token == null ? null : sessions.get(key(token));
        if (s == null) {
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.UNKNOWN,
                    "unknown or ended session; log in again");
        }
        if (clock.millis() >= s.expiresMillis()) {
            // kept (until a login purges it): the console's parallel calls all hear "expired", not one of them
            throw new AuthenticationFailedException(AuthenticationFailedException.Reason.EXPIRED, "the session expired; log in again");
        }
        return new AccessPrincipal("user:" + s.user(), s.role(), VolumeScope.ALL, AccessPrincipal.DEFAULT_DOMAIN);
    }

    /** Ends one session; false if it was not open. */
    public boolean close(String token) {
        return token != null && sessions.remove(key(token)) != null;
    }

    /** Ends every session of {@code user}. */
    public void closeAll(String user) {
        sessions.values().removeIf(s -> s.user().equals(user));
    }

    private static String key(String token) {
        return HexFormat.of().formatHex(Secrets.sha256(token));
    }
}
