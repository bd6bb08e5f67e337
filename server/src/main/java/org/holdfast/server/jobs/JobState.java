package org.holdfast.server.jobs;

import java.util.Locale;

/** Where a job is in its life: queued, running, then one of three ends. */
public enum JobState {
    QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED;

    /** True for the three ends: nothing about the job changes any more. */
    public boolean finished() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }

    /** The name in JSON and query strings: {@code queued}, {@code running}, ... */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a wire name; the message lists the valid ones. */
    public static JobState parse(String text) {
        for (JobState s : values()) {
            if (s.wireName().equalsIgnoreCase(text == null ? "" : text.trim())) {
                return s;
            }
        }
        throw new IllegalArgumentException("job state '" + text + "' is not one of queued, running, succeeded, failed, cancelled");
    }
}
