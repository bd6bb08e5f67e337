package org.holdfast.server.app;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;

/**
 * Where an offline command prints (the result on {@code out}, progress and errors on {@code err}),
 * the clock it stamps with and how often a long check reports progress: the process's own in
 * production, captured streams and a fixed clock in tests.
 */
record ToolConsole(PrintStream out, PrintStream err, Clock clock, Duration progressEvery) {
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

    /** The process's stdout, stderr and the system clock. */
    static ToolConsole system() {
        return new ToolConsole(System.out, System.err, Clock.systemUTC(), PROGRESS_EVERY);
    }

    /** Captured streams and a given clock, progress every 5 s. */
    static ToolConsole of(PrintStream out, PrintStream err, Clock clock) {
        return new ToolConsole(out, err, clock, PROGRESS_EVERY);
    }
}
