package org.holdfast.server.api;

/**
 * The one byte range a {@code Range} header asks for (RFC 9110 §14), resolved against a
 * representation of {@code length} bytes. Only a single {@code bytes} range is served: a header
 * in another unit, with several ranges, or malformed is ignored (the whole image is sent, as the
 * RFC allows).
 *
 * @param first first byte, inclusive
 * @param last  last byte, inclusive
 */
record ByteRange(long first, long last) {
    /** What a Range header comes to. */
    sealed interface Outcome permits Whole, Partial, Unsatisfiable {
    }

    /** No usable Range: send everything with 200. */
    record Whole() implements Outcome {
    }

    /** Send {@code range} with 206. */
    record Partial(ByteRange range) implements Outcome {
    }

    /** The range starts past the end (or asks for a suffix of 0 bytes): 416. */
    record Unsatisfiable() implements Outcome {
    }

    long length() {
        return last - first + 1;
    }

    /** {@code header} (null if none) against a representation of {@code length} bytes. */
    static Outcome resolve(String header, long length) {
        if (header == null) {
            return new Whole();
        }
        String h = header.trim();
        if (!h.regionMatches(true, 0, "bytes=", 0, 6)) {
            return new Whole();
        }
        String spec = h.substring(6).trim();
        if (spec.isEmpty() || spec.indexOf(',') >= 0) {
            return new Whole();
        }
        int dash = spec.indexOf('-');
        if (dash < 0) {
            return new Whole();
        }
        String a = spec.substring(0, dash).trim();
        String b = spec.substring(dash + 1).trim();
        Long from = a.isEmpty() ? null : digits(a);
        Long to = b.isEmpty() ? null : digits(b);
        if ((!a.isEmpty() && from == null) || (!b.isEmpty() && to == null) || (from == null && to == null)) {
            return new Whole();
        }
        if (from == null) { // suffix: the last `to` bytes
            if (to == 0 || length == 0) {
                return new Unsatisfiable();
            }
            return new Partial(new ByteRange(Math.max(0, length - to), length - 1));
        }
        if (to != null && to < from) {
            return new Whole(); // invalid: ignored
        }
        if (from >= length) {
            return new Unsatisfiable();
        }
        return new Partial(new ByteRange(from, to == null ? length - 1 : Math.min(to, length - 1)));
    }

    /** A non-negative decimal, or null if {@code s} is not one (or does not fit a long: treated as past any end). */
    private static Long digits(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return null;
            }
        }
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}
