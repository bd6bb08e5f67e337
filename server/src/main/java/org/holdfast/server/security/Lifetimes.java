package org.holdfast.server.security;

import java.time.Duration;
import java.util.Locale;

/** Parses lifetimes as operators write them: {@code 30d}, {@code 12h}, {@code 90m}, {@code 2w}, or ISO-8601 ({@code P30D}). */
public final class Lifetimes {
    /** Longest lifetime accepted: far beyond any real token, and far below where an expiry date would overflow. */
    static final Duration MAX = Duration.ofDays(36_500);

    private Lifetimes() {
    }

    /** @throws IllegalArgumentException naming the accepted forms */
    public static Duration parse(String s) {
        String bad = "bad lifetime '" + s + "': use e.g. 30d, 12h, 90m, 2w or ISO-8601 like P30D";
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException(bad);
        }
        String t = s.trim().toLowerCase(Locale.ROOT);
        Duration d;
        try {
            if (t.startsWith("p")) {
                d = Duration.parse(s.trim().toUpperCase(Locale.ROOT));
            } else {
                long n = Long.parseLong(t.substring(0, t.length() - 1));
                d = switch (t.charAt(t.length() - 1)) {
                    case 's' -> Duration.ofSeconds(n);
                    case 'm' -> Duration.ofMinutes(n);
                    case 'h' -> Duration.ofHours(n);
                    case 'd' -> Duration.ofDays(n);
                    case 'w' -> Duration.ofDays(Math.multiplyExact(7, n));
                    default -> throw new IllegalArgumentException(bad);
                };
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(bad);
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(bad);
        }
        if (d.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("lifetime '" + s + "' is longer than 100 years (36500d); leave it out for a token that never expires");
        }
        return d;
    }
}
