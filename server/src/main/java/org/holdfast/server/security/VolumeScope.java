package org.holdfast.server.security;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The volumes an agent token may reach: exact names and glob patterns ({@code *} any run of
 * characters, {@code ?} one character). {@link #ALL} is every volume (users and non-agent tokens).
 */
public record VolumeScope(List<String> patterns) {
    /** Every volume. */
    public static final VolumeScope ALL = new VolumeScope(List.of("*"));
    private static final int MAX_PATTERNS = 256;
    private static final int MAX_PATTERN_LENGTH = 128;

    public VolumeScope {
        if (patterns == null || patterns.isEmpty()) {
            throw new IllegalArgumentException("a volume scope needs at least one volume name or pattern");
        }
        if (patterns.size() > MAX_PATTERNS) {
            throw new IllegalArgumentException("a volume scope holds at most " + MAX_PATTERNS + " names or patterns");
        }
        for (String p : patterns) {
            if (p == null || p.isEmpty() || p.length() > MAX_PATTERN_LENGTH || !p.matches("[A-Za-z0-9._*?-]+")) {
                throw new IllegalArgumentException("invalid volume pattern '" + p + "': use 1 to " + MAX_PATTERN_LENGTH
                        + " letters, digits, '.', '_', '-' and the wildcards '*' and '?'");
            }
        }
        patterns = List.copyOf(patterns);
    }

    /** True if {@code volume} matches one of the names or patterns. */
    public boolean allows(String volume) {
        for (String p : patterns) {
            if (p.equals("*") || p.equals(volume) || (hasWildcard(p) && glob(p).matcher(volume).matches())) {
                return true;
            }
        }
        return false;
    }

    /** True if this scope reaches every volume. */
    public boolean isAll() {
        return patterns.contains("*");
    }

    private static boolean hasWildcard(String p) {
        return p.indexOf('*') >= 0 || p.indexOf('?') >= 0;
    }

    private static Pattern glob(String p) {
        StringBuilder re = new StringBuilder();
        for (char c : p.toCharArray()) {
            switch (c) {
                case '*' -> re.append(".*");
                case '?' -> re.append('.');
                default -> re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(re.toString());
    }
}
