package org.holdfast.server.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the real agent CLI ({@code org.holdfast.client.cli.HoldfastAgent}) as a child process, one
 * process per command, as an operator's shell would.
 */
public final class AgentProcess {
    static final String MAIN_CLASS = "org.holdfast.client.cli.HoldfastAgent";
    static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final LogDir logs;
    private final List<String> extraJvmOptions;

    public AgentProcess(LogDir logs) {
        this(logs, List.of());
    }

    /** Agents started with {@code extraJvmOptions} after the harness's own (e.g. {@link ChildJvm#FULL_JIT}). */
    public AgentProcess(LogDir logs, List<String> extraJvmOptions) {
        this.logs = logs;
        this.extraJvmOptions = List.copyOf(extraJvmOptions);
    }

    /** A started agent; {@link #await()} waits for it, {@link #kill()} ends it with SIGKILL. */
    public final class Running {
        private final List<String> args;
        private final Process process;
        private final Path stdout;
        private final Path stderr;
        private final long startNanos = System.nanoTime();

        private Running(List<String> args, Process process, Path stdout, Path stderr) {
            this.args = args;
            this.process = process;
            this.stdout = stdout;
            this.stderr = stderr;
        }

        public boolean isAlive() {
            return process.isAlive();
        }

        /** The agent's process id (for /proc figures such as peak RSS). */
        public long pid() {
            return process.pid();
        }

        /** SIGINT, as Ctrl-C in a terminal sends it. */
        public void interrupt() {
            try {
                int rc = new ProcessBuilder("kill", "-INT", Long.toString(process.pid())).inheritIO().start().waitFor();
                assertThat(rc).as("kill -INT %s", process.pid()).isZero();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        /** SIGKILL; true if the signal ended it, false if it had exited by itself already. */
        public boolean kill() {
            return ChildJvm.sigkill(process);
        }

        public AgentResult await() {
            try {
                if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    ChildJvm.sigkill(process);
                    throw new IllegalStateException("agent still running after " + TIMEOUT + ": " + result(-1));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ChildJvm.sigkill(process);
                throw new IllegalStateException(e);
            }
            return result(process.exitValue());
        }

        private AgentResult result(int exit) {
            return new AgentResult(args, exit, read(stdout), read(stderr), Duration.ofNanos(System.nanoTime() - startNanos));
        }
    }

    /** Starts {@code agent <args>} without waiting. */
    public Running start(String... args) {
        List<String> list = new ArrayList<>(List.of(args));
        if (list.size() > 0 && List.of("backup", "restore", "snapshots").contains(list.get(0)) && !list.contains("--known-servers")) {
            // never the real ~/.holdfast/known-servers of whoever runs the tests
            list.add("--known-servers");
            list.add(knownServers().toString());
        }
        Path[] out = logs.next("agent-" + args[0] + (list.contains("--volume") ? "-" + list.get(list.indexOf("--volume") + 1) : ""));
        List<String> jvm = new ArrayList<>(List.of("-Xmx256m", "-XX:+UseSerialGC"));
        jvm.addAll(extraJvmOptions);
        // the token of the harness server the agent is aimed at goes in the environment, never in
        // the arguments (ps shows those); with --token-file merged, ServerProcess.agentTokenFile() works too
        String token = list.contains("--server") && list.indexOf("--server") + 1 < list.size()
                ? ServerProcess.agentTokenFor(list.get(list.indexOf("--server") + 1)) : null;
        Map<String, String> env = token == null ? Map.of() : Map.of("HOLDFAST_TOKEN", token);
        Process p = ChildJvm.start(MAIN_CLASS, jvm, ChildJvm.agentClasspath(), list, env, out[0], out[1]);
        return new Running(list, p, out[0], out[1]);
    }

    /** The known-servers file the agents of this test class share (beside their logs). */
    public Path knownServers() {
        return logs.path().resolve("known-servers");
    }

    /** Runs {@code agent <args>} to the end. */
    public AgentResult run(String... args) {
        return start(args).await();
    }

    /** {@code backup --json}; fails the test unless the agent exits 0. */
    public BackupSummary backup(ServerProcess server, String volume, Path source, Path stateDir, String... extra) {
        AgentResult r = run(backupArgs(server, volume, source, stateDir, extra));
        assertThat(r.exitCode()).as("backup of %s should succeed:\n%s\n%s", volume, r, server.diagnostics()).isZero();
        return BackupSummary.parse(r);
    }

    /** The argument list of {@code backup --json}. */
    public static String[] backupArgs(ServerProcess server, String volume, Path source, Path stateDir, String... extra) {
        List<String> a = new ArrayList<>(List.of("backup", "--server", server.ingestAddress(), "--volume", volume,
                "--source", source.toString(), "--state-dir", stateDir.toString(), "--json"));
        a.addAll(server.agentTrustArgs());
        a.addAll(List.of(extra));
        return a.toArray(String[]::new);
    }

    /** {@code snapshots --json}; fails the test unless the agent exits 0. */
    public List<SnapshotInfo> snapshots(ServerProcess server, String volume) {
        List<String> a = new ArrayList<>(List.of("snapshots", "--server", server.ingestAddress(), "--volume", volume, "--json"));
        a.addAll(server.agentTrustArgs());
        AgentResult r = run(a.toArray(String[]::new));
        assertThat(r.exitCode()).as("listing snapshots of %s should succeed:\n%s\n%s", volume, r, server.diagnostics()).isZero();
        JsonNode array = json(r);
        assertThat(array.isArray()).as("snapshots --json prints a JSON array: %s", r).isTrue();
        List<SnapshotInfo> list = new ArrayList<>();
        array.forEach(n -> list.add(SnapshotInfo.of(n)));
        return list;
    }

    /**
     * {@code restore --json} into {@code target} with {@code extra} options ({@code --force} to
     * overwrite a target that exists); fails the test unless the agent exits 0.
     */
    public AgentResult restore(ServerProcess server, String volume, String snapshotId, Path target, String... extra) {
        AgentResult r = run(restoreArgs(server, volume, snapshotId, target, extra));
        assertThat(r.exitCode()).as("restore of %s snapshot %s should succeed:\n%s\n%s", volume, snapshotId, r,
                server.diagnostics()).isZero();
        return r;
    }

    public static String[] restoreArgs(ServerProcess server, String volume, String snapshotId, Path target, String... extra) {
        List<String> a = new ArrayList<>(List.of("restore", "--server", server.ingestAddress(), "--volume", volume,
                "--snapshot", snapshotId, "--target", target.toString(), "--json"));
        a.addAll(server.agentTrustArgs());
        a.addAll(List.of(extra));
        return a.toArray(String[]::new);
    }

    /** Parses the JSON document on stdout (the whole of it, or else its last line that looks like JSON). */
    static JsonNode json(AgentResult r) {
        String out = r.stdout().strip();
        try {
            return JSON.readTree(out);
        } catch (IOException whole) {
            String[] lines = out.split("\\R");
            for (int i = lines.length - 1; i >= 0; i--) {
                String l = lines[i].strip();
                if (l.startsWith("{") || l.startsWith("[")) {
                    try {
                        return JSON.readTree(l);
                    } catch (IOException ignored) {
                        // try an earlier line
                    }
                }
            }
            throw new AssertionError("agent printed no JSON: " + r, whole);
        }
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? new String(Files.readAllBytes(p), StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
