package org.holdfast.server.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.cli.HoldfastAgent;

/**
 * What the daemon tests share: the agent's CLI run in this JVM (run-now, status, report-run), the
 * daemon started as its own process, waiting on a condition while the daemon lives, and the runs
 * the server shows in {@code GET /api/v1/agents}.
 */
final class DaemonCli {
    private static final ObjectMapper JSON = new ObjectMapper();

    private DaemonCli() {
    }

    /** One CLI invocation's exit code and output. */
    record Result(int exit, String out, String err) {
    }

    static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = HoldfastAgent.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** {@code holdfast-agent daemon --config config} as a child JVM, its output in {@code out[0]} and {@code out[1]}. */
    static Process start(Path config, Path[] out) {
        return ChildJvm.start(AgentProcess.MAIN_CLASS, List.of("-Xmx256m", "-XX:+UseSerialGC"), ChildJvm.agentClasspath(),
                List.of("daemon", "--config", config.toString()), out[0], out[1]);
    }

    /** A condition polled by {@link #await}. */
    interface Check {
        boolean holds() throws Exception;
    }

    /** Polls {@code check} every 200 ms; fails with the daemon's output if it exits or {@code timeout} passes first. */
    static void await(String what, Duration timeout, Check check, Process daemon, Path[] daemonOut) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.holds()) {
            if (!daemon.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError((daemon.isAlive() ? "timed out waiting for " : "daemon exited waiting for ") + what
                        + "\n--- daemon stdout\n" + ChildJvm.tail(daemonOut[0], 6000) + "\n--- daemon stderr\n" + ChildJvm.tail(daemonOut[1], 4000));
            }
            Thread.sleep(200);
        }
    }

    /** Every daemon run of every agent in /api/v1/agents, most recent first per agent. */
    static List<JsonNode> serverRuns(ServerProcess server) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode agent : JSON.readTree(server.get("/api/v1/agents").body())) {
            agent.path("runs").forEach(out::add);
        }
        return out;
    }
}
