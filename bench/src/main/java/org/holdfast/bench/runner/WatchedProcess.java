package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A child process whose wall time and peak resident memory are measured. The peak is the
 * kernel's high-water mark (VmHWM in /proc/PID/status), which only grows; it is polled every
 * 20 ms, so the last reading before exit is within 20 ms of the process's true peak.
 */
public final class WatchedProcess {
    private static final long POLL_MILLIS = 20;

    private final List<String> command;
    private final Process process;
    private final Path stdout;
    private final Path stderr;
    private final long startNanos;
    private final Thread sampler;
    private volatile long peakKiB;
    private volatile long endNanos;

    /** What a finished process did. */
    public record Outcome(List<String> command, int exitCode, double seconds, long peakRssBytes, String stdout,
                          String stderr) {
        /** The tail of stderr, for error messages. */
        public String errorTail() {
            String s = stderr.isBlank() ? stdout : stderr;
            return s.length() > 3000 ? s.substring(s.length() - 3000) : s;
        }
    }

    private WatchedProcess(List<String> command, Process process, Path stdout, Path stderr, long startNanos) {
        this.command = command;
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
        this.startNanos = startNanos;
        this.sampler = new Thread(this::sample, "rss-" + process.pid());
        this.sampler.setDaemon(true);
        this.sampler.start();
    }

    /** Starts {@code command} with its output going to {@code logPrefix}.out and .err. */
    public static WatchedProcess start(List<String> command, Map<String, String> env, Path workDir, Path logPrefix)
            throws IOException {
        Files.createDirectories(logPrefix.toAbsolutePath().getParent());
        Path out = logPrefix.resolveSibling(logPrefix.getFileName() + ".out");
        Path err = logPrefix.resolveSibling(logPrefix.getFileName() + ".err");
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        if (workDir != null) {
            Files.createDirectories(workDir);
            pb.directory(workDir.toFile());
        }
        if (env != null) {
            pb.environment().putAll(env);
        }
        long t0 = System.nanoTime();
        return new WatchedProcess(command, pb.start(), out, err, t0);
    }

    /** Runs {@code command} to the end. */
    public static Outcome run(List<String> command, Map<String, String> env, Path workDir, Path logPrefix,
                              Duration timeout) throws IOException {
        return start(command, env, workDir, logPrefix).await(timeout);
    }

    /** The process id. */
    public long pid() {
        return process.pid();
    }

    /** Whether the process still runs. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Peak resident set so far, in bytes (0 if never read). */
    public long peakRssBytes() {
        long now = readHwmKiB(process.pid());
        if (now > peakKiB) {
            peakKiB = now;
        }
        return peakKiB * 1024;
    }

    /** Waits for the end; on timeout the process is killed and an IOException thrown. */
    public Outcome await(Duration timeout) throws IOException {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IOException(command.get(0) + " still running after " + timeout + ": " + command
                        + "\n" + tail(stderr));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("interrupted waiting for " + command, e);
        }
        long end = endNanos != 0 ? endNanos : System.nanoTime();
        return new Outcome(command, process.exitValue(), (end - startNanos) / 1e9, peakKiB * 1024, read(stdout), read(stderr));
    }

    /** SIGTERM, then SIGKILL after {@code grace}. */
    public void stop(Duration grace) {
        peakRssBytes();
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** The last part of stdout and stderr, for diagnostics. */
    public String diagnostics() {
        return "--- " + stdout + "\n" + tail(stdout) + "\n--- " + stderr + "\n" + tail(stderr);
    }

    private void sample() {
        long pid = process.pid();
        while (process.isAlive()) {
            long kib = readHwmKiB(pid);
            if (kib > peakKiB) {
                peakKiB = kib;
            }
            try {
                if (process.waitFor(POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                    break;
                }
            } catch (InterruptedException e) {
                return;
            }
        }
        endNanos = System.nanoTime();
    }

    /** VmHWM of a live process in KiB, or 0 if it is gone. */
    static long readHwmKiB(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // Gone between the check and the read: keep the last reading.
        }
        return 0;
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(Path p) {
        String s = read(p);
        return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
    }
}
