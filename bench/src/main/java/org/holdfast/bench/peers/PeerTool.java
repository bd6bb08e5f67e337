package org.holdfast.bench.peers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.holdfast.bench.runner.BackupTarget;
import org.holdfast.bench.runner.WatchedProcess;

/**
 * What restic and borg share as benchmark targets: one repository per workload holding every
 * volume, each volume backed up from its image's fixed path, so the tool sees one file whose
 * contents change every day, and restores that land under a scratch folder and are moved to the
 * target path.
 */
abstract class PeerTool implements BackupTarget {
    static final String PASSWORD = "holdfast-bench";
    private static final Duration TIMEOUT = Duration.ofMinutes(30);

    Path dir;
    Path repo;
    private int runs;

    /** Whether a command is on the PATH. */
    static boolean installed(String command) {
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String d : path.split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, command))) {
                return true;
            }
        }
        return false;
    }

    abstract Map<String, String> env();

    WatchedProcess.Outcome run(String label, List<String> cmd, Path workDir) throws IOException {
        Path log = dir.resolve("logs").resolve(String.format("%04d-%s", ++runs, label));
        WatchedProcess.Outcome o = WatchedProcess.run(cmd, env(), workDir == null ? dir : workDir, log, TIMEOUT);
        if (o.exitCode() != 0) {
            throw new IOException(name() + " " + label + " exited " + o.exitCode() + ":\n" + o.errorTail());
        }
        return o;
    }

    String version(List<String> cmd) {
        try {
            return org.holdfast.bench.workload.Processes.run(cmd, null).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** Moves the single restored file found under {@code scratch} to {@code target}. */
    static void takeRestored(Path scratch, Path image, Path target) throws IOException {
        Path restored;
        try (Stream<Path> s = Files.walk(scratch)) {
            restored = s.filter(p -> Files.isRegularFile(p) && p.getFileName().equals(image.getFileName()))
                    .findFirst().orElseThrow(() -> new IOException("no restored " + image.getFileName() + " under " + scratch));
        }
        Files.move(restored, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        org.holdfast.bench.workload.Processes.run(List.of("rm", "-rf", scratch.toString()), null);
    }

    @Override
    public long storedBytes() throws IOException {
        return org.holdfast.bench.runner.DirectorySize.of(repo);
    }

    @Override
    public void close() {
        // Nothing runs between commands.
    }
}
