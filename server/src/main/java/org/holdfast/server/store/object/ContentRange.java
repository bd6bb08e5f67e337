package org.holdfast.server.store.object;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code Content-Range} header of an object store's answer, read strictly: {@code bytes first-last/total}
 * (a 206) or {@code bytes *&#47;total} (a 416). Anything else parses as null, so that an odd header is
 * refused by its caller rather than read as some size.
 */
record ContentRange(long first, long last, long total) {
    /** {@link #first} and {@link #last} of the unsatisfied form {@code bytes *&#47;total}. */
    static final long NONE = -1;
    /** {@link #total} when the store does not know it ({@code /*}). */
    static final long UNKNOWN = -1;

    // 18 digits at most: a long never overflows, and no object is that large
    private static final Pattern RANGE = Pattern.compile("bytes (\\d{1,18})-(\\d{1,18})/(\\d{1,18}|\\*)", Pattern.CASE_INSENSITIVE);
    private static final Pattern UNSATISFIED = Pattern.compile("bytes \\*/(\\d{1,18})", Pattern.CASE_INSENSITIVE);

    /** The header's range, or null if it is missing or not one of the two forms (or a range that cannot be: last before first, past the total). */
    static ContentRange parse(String header) {
        if (header == null) {
            return null;
        }
        String h = header.trim();
        Matcher m = RANGE.matcher(h);
        if (m.matches()) {
            long first = Long.parseLong(m.group(1));
            long last = Long.parseLong(m.group(2));
            long total = m.group(3).equals("*") ? UNKNOWN : Long.parseLong(m.group(3));
            if (last < first || total != UNKNOWN && last >= total) {
                return null;
            }
            return new ContentRange(first, last, total);
        }
        Matcher u = UNSATISFIED.matcher(h);
        return u.matches() ? new ContentRange(NONE, NONE, Long.parseLong(u.group(1))) : null;
    }

    /** Whether this is the unsatisfied form ({@code bytes *&#47;total}, of a 416). */
    boolean unsatisfied() {
        return first == NONE;
    }
}
