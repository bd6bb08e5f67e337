package org.holdfast.server.security;

import java.time.Duration;
import java.util.Locale;

/** Parses lifetimes as operators write them: {@code 30d}, {@code 12h}, {@code 90m}, {@code 2w}, or ISO-8601 ({@code P30D}). */
public final class Lifetimes {
    private Lifetimes() {
    }

    /** @throws IllegalArgumentException naming the accepted forms */
    public static Duration parse(String s) {
        String bad = "bad lifetime '" + s + "': use e.g. 30d, 12h, 90m, 2w or ISO-8601 like P30D";
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException(bad);
        }
        String t = s.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.startsWith("p")) {
                return Duration.parse(s.trim().toUpperCase(Locale.ROOT));
            }
            long n = Long.parseLong(t.substring(0, t.length() - 1));
            if (n <= 0) {
                throw new IllegalArgumentException(bad);
            }
            return switch (t.charAt(t.length() - 1)) {
                case 's' -> Duration.ofSeconds(n);
                case 'm' -> Duration.ofMinutes(n);
                case 'h' -> Duration.ofHours(n);
                case 'd' -> Duration.ofDays(n);
                case 'w' -> Duration.ofDays(7 * n);
                default -> throw new IllegalArgumentException(bad);
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(bad);
        }
    }
}
