package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One simulated host's resident agent: a {@code holdfast-agent daemon} process with its own config,
 * state directory and control socket, and no volume of its own that would run during the bench
 * (its one volume's schedule fires on 29 February only). The bench's backup and restore commands
 * are handed to it with {@code --socket}; {@link #handoffs} counts the ones its log shows.
 */
final class ResidentAgent implements AutoCloseable {
    private static final Duration STARTUP = Duration.ofMinutes(2);
    /** The longest Unix socket path the JDK binds on Linux (sun_path is 108 bytes; 107 fails: AgentModeTest). */
    private static final int MAX_SOCKET_PATH = 106;
    /** The daemon binds {@code agent.sock.new}, then renames it to {@code agent.sock} (ControlServer): the longer name must fit. */
    private static final String BOUND_NAME = "agent.sock.new";
    /** A valid cron expression that cannot fire during a bench (next: 29 February 2028). */
    static final String IDLE_SCHEDULE = "0 0 29 2 *";

    private final WatchedProcess process;
    private final Path socket;
    private final Path log;
    /** A short directory in /tmp used instead of the target's (removed at close), else null. */
    private final Path temporaryState;

    private ResidentAgent(WatchedProcess process, Path socket, Path log, Path temporaryState) {
        this.process = process;
        this.socket = socket;
        this.log = log;
        this.temporaryState = temporaryState;
    }

    /**
     * Starts a daemon with {@code command} (the agent launcher or java -jar, its JVM options set by
     * the caller) plus {@code daemon --config}, its state under {@code stateDir}, and waits for its socket.
     */
    static ResidentAgent start(List<String> command, Map<String, String> env, Path workDir, Path stateDir,
                               Path logPrefix, String server, List<String> trustArgs) throws IOException {
        Path state = stateDir.toAbsolutePath();
        Path temporary = null;
        if (!socketFits(state)) {
            // too long for a socket address: a short private directory instead
            state = Files.createTempDirectory("hfbench-agent-");
            temporary = state;
        }
        Files.createDirectories(state);
        Path config = Files.writeString(state.resolve("agent.yaml"), config(server, trustArgs, state));
        List<String> cmd = new ArrayList<>(command);
        cmd.addAll(List.of("daemon", "--config", config.toString()));
        WatchedProcess p = WatchedProcess.start(cmd, env, workDir, logPrefix);
        Path out = logPrefix.resolveSibling(logPrefix.getFileName() + ".out");
        ResidentAgent a = new ResidentAgent(p, state.resolve("agent.sock"), out, temporary);
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (!(Files.exists(a.socket) && a.logText().contains("control socket"))) {
            if (!p.isAlive()) {
                throw new IOException("agent daemon exited at start:\n" + p.diagnostics());
            }
            if (System.nanoTime() > deadline) {
                p.stop(Duration.ofSeconds(5));
                throw new IOException("agent daemon not listening on " + a.socket + " after " + STARTUP + ":\n" + p.diagnostics());
            }
            sleep(50);
        }
        return a;
    }

    /** True if the daemon's socket, under both of its names, fits a Unix socket address in {@code stateDir}. */
    static boolean socketFits(Path stateDir) {
        return stateDir.toAbsolutePath().resolve(BOUND_NAME).toString().getBytes(StandardCharsets.UTF_8).length <= MAX_SOCKET_PATH;
    }

    /** The daemon's config: the bench's server and trust, a private state directory, one idle volume. */
    static String config(String server, List<String> trustArgs, Path stateDir) {
        String trust;
        if (trustArgs.contains("--no-tls")) {
            trust = "  no-tls: true\n";
        } else {
            int f = trustArgs.indexOf("--fingerprint");
            if (f < 0 || f + 1 >= trustArgs.size()) {
                throw new IllegalArgumentException("no --fingerprint or --no-tls in " + trustArgs);
            }
            trust = "  fingerprint: \"" + trustArgs.get(f + 1) + "\"\n";
        }
        return "server: " + server + "\ntrust:\n" + trust + "state-dir: " + stateDir.toAbsolutePath() + "\n"
                + "volumes:\n  - name: bench-idle\n    source: " + stateDir.toAbsolutePath().resolve("idle.img") + "\n"
                + "    schedule: \"" + IDLE_SCHEDULE + "\"\n";
    }

    /** The control socket, for the CLI's {@code --socket}. */
    Path socket() {
        return socket;
    }

    /** Handed-off runs of {@code command} (backup or restore) of {@code volume} the daemon logged as ended. */
    int handoffs(String command, String volume) {
        Matcher m = Pattern.compile("handoff: " + Pattern.quote(command) + " of volume " + Pattern.quote(volume)
                + " ended with exit code").matcher(logText());
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    /** Waits up to a few seconds for the daemon's log to show more than {@code before} such runs. */
    boolean awaitHandoff(String command, String volume, int before) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (handoffs(command, volume) <= before) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            sleep(20);
        }
        return true;
    }

    /**
     * Resets the kernel's peak-RSS mark of the daemon (clear_refs 5), so {@link #peakRssBytes} covers
     * the next run only; false if the kernel refused (the peak then spans the daemon's life so far).
     */
    boolean resetPeak() {
        try {
            Files.writeString(Path.of("/proc", Long.toString(process.pid()), "clear_refs"), "5");
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The daemon's resident-set peak since the last {@link #resetPeak}, in bytes. */
    long peakRssBytes() {
        return WatchedProcess.readHwmKiB(process.pid()) * 1024;
    }

    /** CPU seconds (user and system) the daemon has used so far, -1 if unreadable. */
    double cpuSeconds() {
        return ThreadCpu.process(process.pid());
    }

    /** Whether the daemon still runs. */
    boolean isAlive() {
        return process.isAlive();
    }

    /** The daemon's log so far, for diagnostics. */
    String diagnostics() {
        return process.diagnostics();
    }

    private String logText() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** SIGTERM (the daemon closes its socket and exits), SIGKILL after 20 s. */
    @Override
    public void close() {
        process.stop(Duration.ofSeconds(20));
        if (temporaryState != null) {
            try {
                org.holdfast.bench.workload.Processes.run(List.of("rm", "-rf", temporaryState.toString()), null);
            } catch (IOException e) {
                // a few small files left in /tmp; the figures are taken
            }
        }
    }
}
