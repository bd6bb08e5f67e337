package org.holdfast.client.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.holdfast.client.ExitCode;
import org.holdfast.client.daemon.HandoffRunner;

/** Runs a {@code backup} or {@code restore} a CLI handed to the daemon, in the daemon's JVM, exactly as that CLI would have. */
final class InProcessCommand implements HandoffRunner {
    private static final Set<String> COMMANDS = Set.of("backup", "restore");

    @Override
    public int run(List<String> args, String token, PrintStream out, PrintStream err) {
        if (args.isEmpty() || !COMMANDS.contains(args.get(0))) {
            err.println("holdfast-agent: error: the agent daemon runs only backup and restore for a CLI, not "
                    + (args.isEmpty() ? "nothing" : args.get(0)) + " (run it with --no-daemon)");
            return ExitCode.USAGE.code();
        }
        List<String> a = new ArrayList<>(args);
        a.add("--no-daemon"); // never back to ourselves
        if (token != null) {
            a.addAll(List.of("--token", token));
        }
        return HoldfastAgent.run(a.toArray(String[]::new), out, err);
    }
}
