package org.holdfast.server.security;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Limits failed logins per user name and per source address to {@code maxPerMinute} each, over a
 * sliding window of one minute. A login is refused outright (before the password is checked) while
 * either key is at its limit, so a guesser gains nothing by trying faster. A success clears the
 * user's failures, not the address's (a guesser with one good account keeps its limit on others).
 * Memory is bounded: at most {@code maxPerMinute} times per key, keys empty out after a minute, and
 * a user key holds at most the first {@value UserDirectory#MAX_NAME_CHARS} + 1 characters of the name
 * (no user has a longer one), so names of a megabyte cannot pile up.
 */
public final class LoginThrottle {
    private static final long WINDOW_MILLIS = 60_000;
    private static final int MAX_KEYS = 100_000;

    private final int maxPerMinute;
    private final Clock clock;
    private final Map<String, Deque<Long>> failures = new HashMap<>();

    public LoginThrottle(int maxPerMinute, Clock clock) {
        if (maxPerMinute < 1) {
            throw new IllegalArgumentException("holdfast.security.failed-logins-per-minute must be at least 1");
        }
        this.maxPerMinute = maxPerMinute;
        this.clock = clock;
    }

    /** @throws LoginThrottledException if the user or the address has used up its failures for now */
    public synchronized void check(String user, String address) {
        long now = clock.millis();
        long wait = Math.max(waitMillis(userKey(user), now), waitMillis("a:" + address, now));
        if (wait > 0) {
            throw new LoginThrottledException(Duration.ofMillis(wait));
        }
    }

    public synchronized void failed(String user, String address) {
        long now = clock.millis();
        if (failures.size() >= MAX_KEYS) {
            prune(now);
        }
        add(userKey(user), now);
        add("a:" + address, now);
    }

    public synchronized void succeeded(String user) {
        failures.remove(userKey(user));
    }

    /** Characters held in keys: what the memory bound is about. */
    synchronized long keyChars() {
        return failures.keySet().stream().mapToLong(String::length).sum();
    }

    // a name past the longest a user can have is cut one character past it: it can never be a user's,
    // and still counts against the throttle
    private static String userKey(String user) {
        return "u:" + (user.length() > UserDirectory.MAX_NAME_CHARS ? user.substring(0, UserDirectory.MAX_NAME_CHARS + 1) : user);
    }

    private void add(String key, long now) {
        Deque<Long> q = failures.computeIfAbsent(key, k -> new ArrayDeque<>());
        q.addLast(now);
        while (q.size() > maxPerMinute) {
            q.removeFirst();
        }
    }

    /** Millis until the key may try again, 0 if it may now. */
    private long waitMillis(String key, long now) {
        Deque<Long> q = failures.get(key);
        if (q == null) {
            return 0;
        }
        while (!q.isEmpty() && q.peekFirst() <= now - WINDOW_MILLIS) {
            q.removeFirst();
        }
        if (q.isEmpty()) {
            failures.remove(key);
            return 0;
        }
        return q.size() >= maxPerMinute ? q.peekFirst() + WINDOW_MILLIS - now : 0;
    }

    private void prune(long now) {
        for (Iterator<Map.Entry<String, Deque<Long>>> it = failures.entrySet().iterator(); it.hasNext(); ) {
            Deque<Long> q = it.next().getValue();
            if (q.isEmpty() || q.peekLast() <= now - WINDOW_MILLIS) {
                it.remove();
            }
        }
    }
}
