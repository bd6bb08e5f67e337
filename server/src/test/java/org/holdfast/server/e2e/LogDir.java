package org.holdfast.server.e2e;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where child processes of one test class write their stdout and stderr: under
 * {@code target/e2e-logs/<label>/}, kept after the run for diagnosis, numbered in start order.
 */
final class LogDir {
    private final Path dir;
    private final AtomicInteger counter = new AtomicInteger();

    LogDir(String label) {
        this.dir = Path.of("target", "e2e-logs", label).toAbsolutePath();
    }

    /** A fresh stdout/stderr pair named after {@code what}. */
    Path[] next(String what) {
        String base = String.format("%03d-%s", counter.incrementAndGet(), what.replaceAll("[^A-Za-z0-9._-]", "_"));
        return new Path[] {dir.resolve(base + ".out"), dir.resolve(base + ".err")};
    }

    Path path() {
        return dir;
    }
}
