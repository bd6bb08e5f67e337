package org.holdfast.client.daemon;

import java.io.PrintStream;
import java.util.List;

/** Runs a one-shot command ({@code backup}, {@code restore}) that a CLI handed to the daemon, in the daemon's JVM. */
public interface HandoffRunner {
    /**
     * Runs {@code args} (paths already absolute) with {@code token} (or null) as the agent token,
     * printing to {@code out} and {@code err}, and returns the exit code.
     */
    int run(List<String> args, String token, PrintStream out, PrintStream err);
}
