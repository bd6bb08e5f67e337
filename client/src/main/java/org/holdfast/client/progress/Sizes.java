package org.holdfast.client.progress;

import java.util.Locale;

/** Byte counts for people: 1023 B, 4.0 KiB, 1.5 GiB. */
public final class Sizes {
    private Sizes() {
    }

    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
