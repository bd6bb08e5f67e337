package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of a live process and of its threads by name, from /proc (clock ticks of 1/100 s).
 * Used to tell how much of the server's CPU its GC bookkeeping threads take.
 */
final class ThreadCpu {
    private static final double TICK = 0.01;

    private ThreadCpu() {
    }

    /** User plus system CPU seconds of the whole process, or -1 if unreadable. */
    static double process(long pid) {
        return ticks(Path.of("/proc", Long.toString(pid), "stat"));
    }

    /** CPU seconds of the live threads whose name starts with one of the prefixes; -1 if none does. */
    static double threads(long pid, String... prefixes) {
        double sum = 0;
        boolean any = false;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : tasks) {
                String name;
                try {
                    name = Files.readString(t.resolve("comm")).trim();
                } catch (IOException e) {
                    continue;
                }
                for (String p : prefixes) {
                    if (name.startsWith(p)) {
                        any = true;
                        double s = ticks(t.resolve("stat"));
                        sum += Math.max(0, s);
                        break;
                    }
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return any ? sum : -1;
    }

    private static double ticks(Path stat) {
        try {
            String s = Files.readString(stat);
            // The command name may hold spaces; fields start after its closing parenthesis.
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
