package org.holdfast.client.progress;

/** Seconds for people: 42s, 3m05s, 2h10m. */
public final class Durations {
    private Durations() {
    }

    public static String format(long seconds) {
        if (seconds < 60) {
            return seconds + "s";
        }
        if (seconds < 3600) {
            return String.format("%dm%02ds", seconds / 60, seconds % 60);
        }
        return String.format("%dh%02dm", seconds / 3600, (seconds % 3600) / 60);
    }
}
