package org.holdfast.server.app;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/** {@code worker-fsck} runs in tests, and what a run must leave alone: the data directory, and no scratch copy behind. */
final class WorkerFsckRuns {
    private WorkerFsckRuns() {
    }

    /** A run's exit code, standard output and standard error. */
    record Run(int code, String out, String err) {
    }

    /** Runs the command with {@code args}, a progress line at every step. */
    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = WorkerFsckTool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Duration.ZERO);
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Every path under {@code dataDir} with its size and modification time. */
    static List<String> listing(Path dataDir) throws IOException {
        try (Stream<Path> s = Files.walk(dataDir)) {
            return s.sorted().map(p -> {
                try {
                    return dataDir.relativize(p) + " " + (Files.isDirectory(p) ? "d" : Files.size(p)) + " "
                            + Files.getLastModifiedTime(p).toMillis();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).toList();
        }
    }

    /** The checker's scratch copies left in {@code scratchParent}. */
    static List<String> scratchLeft(Path scratchParent) throws IOException {
        try (Stream<Path> s = Files.list(scratchParent)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("holdfast-check-")).toList();
        }
    }
}
