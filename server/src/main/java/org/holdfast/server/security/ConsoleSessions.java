package org.holdfast.server.security;

import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The session tokens that a password login hands out ({@code hfs_<43 characters>}), kept in memory
 * only: a restart logs every console user out, which is the safe direction. Keyed by the token's
 * SHA-256, so the map holds no usable secret. A session ends at its fixed expiry (login time plus
 * the timeout), at logout, or when its user's password, role or account changes. Each user has at
 * most {@link #MAX_SESSIONS_PER_USER}: a login past that ends the user's oldest session, so one
 * account logging in over and over cannot fill the table and lock everyone else out.
 */
public final class ConsoleSessions {
    /** Prefix of every session token. */
    public static final String PREFIX = "hfs_";
    private static final int MAX_SESSIONS = 10_000;
    /** Sessions one user may hold; a browser tab is one, a script that logs in without logging out one per run. */
    public static final int MAX_SESSIONS_PER_USER = 100;

    /** How long an expired session is still answered as expired rather than unknown. */
    private static final long EXPIRED_KEPT_MILLIS = Duration.ofDays(1).toMillis();

    private final Duration timeout;
    private final Clock clock;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private long opened; // under open's lock

    /** A live session: whose it is, until when, and its place in the order of logins (an older session has a lower serial). */
    public record Session(String user, Role role, long expiresMillis, long serial) {
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

    // synchronized: concurrent logins of one user must not both see room under the user's cap
    public synchronized OpenedSession open(UserRecord user) {
        long now = clock.millis();
        sessions.values().removeIf(s -> s.expiresMillis() + EXPIRED_KEPT_MILLIS <= now);
        endOldestBeyond(user.name(), MAX_SESSIONS_PER_USER - 1);
        if (sessions.size() >= MAX_SESSIONS) {
            sessions.values().removeIf(s -> s.expiresMillis() <= now);
            if (sessions.size() >= MAX_SESSIONS) {
                throw new IllegalStateException("too many console sessions open (" + MAX_SESSIONS + "); log some out");
            }
        }
        String token = PREFIX + Secrets.randomText(32);
        Session s = new Session(user.name(), user.role(), now + timeout.toMillis(), ++opened);
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

    /** How many sessions are kept (live, or expired and still answered as such). */
    int size() {
        return sessions.size();
    }

    /** Ends {@code user}'s oldest sessions until at most {@code keep} are left. */
    private void endOldestBeyond(String user, int keep) {
        List<Map.Entry<String, Session>> mine = sessions.entrySet().stream().filter(e -> e.getValue().user().equals(user))
                .sorted(Comparator.comparingLong(e -> e.getValue().serial())).toList();
        for (int i = 0; i < mine.size() - keep; i++) {
            sessions.remove(mine.get(i).getKey());
        }
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
