package org.holdfast.common.protocol;

import java.nio.charset.StandardCharsets;

/** Byte-length checks for the protocol's {@code u16 length + UTF-8} strings. */
final class WireStrings {
    private WireStrings() {
    }

    /** Throws IllegalArgumentException if {@code s} is null or its UTF-8 form is over {@code max} bytes. */
    static String check(String field, String s, int max) {
        if (s == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        int len = s.getBytes(StandardCharsets.UTF_8).length;
        if (len > max) {
            throw new IllegalArgumentException(field + " is " + len + " UTF-8 bytes, limit " + max);
        }
        return s;
    }

    /** The longest prefix of {@code s} whose UTF-8 form fits in {@code max} bytes. */
    static String truncate(String s, int max) {
        if (s.getBytes(StandardCharsets.UTF_8).length <= max) {
            return s;
        }
        int end = 0;
        int bytes = 0;
        while (end < s.length()) {
            int cp = s.codePointAt(end);
            int w = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + w > max) {
                break;
            }
            bytes += w;
            end += Character.charCount(cp);
        }
        return s.substring(0, end);
    }
}
