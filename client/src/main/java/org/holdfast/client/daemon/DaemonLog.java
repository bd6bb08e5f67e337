package org.holdfast.client.daemon;

import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** The daemon's own log: one timestamped line per event, on its stdout (journald keeps it under systemd). */
public final class DaemonLog {
    private final PrintStream out;

    public DaemonLog(PrintStream out) {
        this.out = out;
    }

    /** Logs one line. */
    public synchronized void info(String line) {
        out.println(Instant.now().truncatedTo(ChronoUnit.MILLIS) + " " + line);
        out.flush();
    }
}
