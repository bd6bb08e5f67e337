package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Waits for a server process's scheduled GC cycles by their log lines, instead of for a fixed time. */
final class GcCycles {
    /** What a scheduled cycle logs when it ends (GcConfiguration); the "held back" line is not counted. */
    private static final Pattern ENDED = Pattern.compile("gc cycle: \\d+ snapshots deleted");

    private GcCycles() {
    }

    /** Cycles that ended in the server's current process. */
    static int ended(ServerProcess server) {
        Matcher m = ENDED.matcher(server.log());
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    /**
     * Returns once {@code more} further cycles have ended (the first may have started before the call,
     * so {@code more} of 2 means at least one whole cycle after it); fails after a minute.
     */
    static void awaitMore(ServerProcess server, int more) throws InterruptedException {
        int target = ended(server) + more;
        long start = System.nanoTime();
        while (ended(server) < target && System.nanoTime() - start < 60_000_000_000L) {
            Thread.sleep(50);
        }
        System.out.printf("[e2e] %d more GC cycles ended in %d ms%n", more, (System.nanoTime() - start) / 1_000_000);
        assertThat(ended(server)).as("%d more GC cycles ended:\n%s", more, server.diagnostics()).isGreaterThanOrEqualTo(target);
    }
}
