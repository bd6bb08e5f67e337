package org.holdfast.server.verify;

import java.time.Duration;

/** Durations as operators write them ({@code 30d}, {@code 12h}, {@code 90m}, {@code 45s}), never Java's {@code PT720H}. */
public final class DurationText {
    private DurationText() {
    }

    /** The largest whole unit that expresses {@code d} exactly; null for null, {@code 0} for zero. */
    public static String of(Duration d) {
        if (d == null) {
            return null;
        }
        long s = d.getSeconds();
        if (s == 0) {
            return "0";
        }
        if (s % 86_400 == 0) {
            return s / 86_400 + "d";
        }
        if (s % 3_600 == 0) {
            return s / 3_600 + "h";
        }
        if (s % 60 == 0) {
            return s / 60 + "m";
        }
        return s + "s";
    }
}
