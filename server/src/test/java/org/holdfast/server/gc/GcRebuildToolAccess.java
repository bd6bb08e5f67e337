package org.holdfast.server.gc;

import java.io.PrintStream;
import java.time.Clock;

/** Test access to the offline {@link GcRebuildTool} from other packages (the e2e tests run it as an operator would). */
public final class GcRebuildToolAccess {
    private GcRebuildToolAccess() {
    }

    /** See {@link GcRebuildTool#run}. */
    public static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        return GcRebuildTool.run(args, out, err, clock);
    }
}
