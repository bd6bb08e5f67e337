package org.holdfast.server.gc;

import java.io.PrintStream;
import java.time.Clock;
import org.holdfast.server.app.ServerCli;

/** Test access to the offline {@code gc-rebuild} command (its command line is server/app's) from the gc and e2e tests. */
public final class GcRebuildToolAccess {
    private GcRebuildToolAccess() {
    }

    /** Runs {@code holdfast-server gc-rebuild args...} with these streams and clock; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        String[] all = new String[args.length + 1];
        all[0] = "gc-rebuild";
        System.arraycopy(args, 0, all, 1, args.length);
        return ServerCli.run(all, out, err, clock);
    }
}
