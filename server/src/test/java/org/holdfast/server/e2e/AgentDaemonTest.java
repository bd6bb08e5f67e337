package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The resident agent as an operator runs it: a real server process and a real
 * {@code holdfast-agent daemon} process with a YAML config. A schedule every few seconds makes
 * snapshots; {@code run-now} backs up a volume that has no schedule due; {@code status} shows the last
 * runs; a failing pre hook skips its backup and is recorded while the post hook still runs; and a
 * server killed before a scheduled run makes that run retry until the server is back on its port.
 */
class AgentDaemonTest {
    private static final LogDir logs = new LogDir("AgentDaemonTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NEVER = "0 0 1 1 *";

    @TempDir
    Path work;

    @Test
    void daemon_scheduleRunNowStatusHooksAndServerOutage() throws Exception {
        Path sched = VolumeImage.generate(11, 1 << 20).writeTo(work.resolve("sched.img"));
        Path manual = VolumeImage.generate(12, 1 << 20).writeTo(work.resolve("manual.img"));
        Path hooked = VolumeImage.generate(13, 1 << 20).writeTo(work.resolve("hooked.img"));
        Path postRan = work.resolve("post-ran");
        Path schedPost = work.resolve("sched-post");
        Path state = work.resolve("state");
        ServerProcess server = ServerProcess.start(work.resolve("server"), "sungem", logs);
        Process daemon = null;
        Path[] daemonOut = logs.next("daemon");
        try {
            Path config = Files.writeString(work.resolve("agent.yaml"), """
                    server: %s
                    trust:
                      fingerprint: "%s"
                    token-file: %s
                    state-dir: %s
                    retry: {attempts: 1000, initial-backoff: 300ms, max-backoff: 1s}
                    volumes:
                      - name: sched
                        source: %s
                        schedule: "*/3 * * * * *"
                        hooks: {pre: "sleep 1", post: "echo $HOLDFAST_RESULT >> %s"}
                      - name: manual
                        source: %s
                        schedule: "%s"
                      - name: hooked
                        source: %s
                        schedule: "%s"
                        hooks:
                          pre: {command: "echo cannot freeze >&2; exit 7", timeout: 20s}
                          post: "echo $HOLDFAST_RESULT > %s"
                    """.formatted(server.ingestAddress(), server.fingerprint(), server.agentTokenFile(), state, sched, schedPost, manual, NEVER,
                    hooked, NEVER, postRan));
            daemon = DaemonCli.start(config, daemonOut);
            Process d = daemon;
            Path socket = state.resolve("agent.sock");
            DaemonCli.await("the control socket", Duration.ofSeconds(60), () -> Files.exists(socket), d, daemonOut);
            assertThat(Files.getPosixFilePermissions(socket)).as("socket mode")
                    .containsExactlyInAnyOrderElementsOf(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));

            // the schedule: three snapshots, each a committed run in the daemon's log
            DaemonCli.await("3 scheduled snapshots", Duration.ofSeconds(120), () -> snapshots(server, "sched") >= 3, d, daemonOut);

            // run-now on a volume whose schedule is not due this year
            DaemonCli.Result runNow = DaemonCli.run("run-now", "manual", "--socket", socket.toString());
            assertThat(runNow.exit()).as(runNow.toString()).isZero();
            assertThat(runNow.out()).startsWith("volume manual: succeeded").contains("snapshot manual@1 committed (full)");
            assertThat(snapshots(server, "manual")).isEqualTo(1);

            // a failing pre hook: no backup, recorded as failed, post hook ran anyway
            DaemonCli.Result hookedRun = DaemonCli.run("run-now", "--volume", "hooked", "--socket", socket.toString());
            assertThat(hookedRun.exit()).as(hookedRun.toString()).isEqualTo(5);
            assertThat(hookedRun.out()).contains("failed").contains("pre hook failed (exit 7: cannot freeze); backup skipped");
            assertThat(Files.readString(postRan)).isEqualTo("failed\n");
            assertThat(server.get("/api/v1/volumes/hooked/snapshots").statusCode()).as("hooked never reached the server").isEqualTo(404);

            // status shows every volume's last run
            JsonNode status = status(socket);
            assertThat(volume(status, "manual").path("last").path("snapshot").asText()).isEqualTo("manual@1");
            assertThat(volume(status, "manual").path("last").path("bytesRead").asLong()).isEqualTo(1 << 20);
            assertThat(volume(status, "hooked").path("last").path("result").asText()).isEqualTo("failed");
            assertThat(volume(status, "hooked").path("last").path("postHook").asText()).isEqualTo("exit 0");
            assertThat(volume(status, "sched").path("last").path("result").asText()).isEqualTo("succeeded");
            assertThat(volume(status, "sched").path("next").asText()).isNotEmpty();
            DaemonCli.Result text = DaemonCli.run("status", "--socket", socket.toString());
            assertThat(text.out()).contains("holdfast-agent daemon").contains("sched  (" + sched + ")  schedule '*/3 * * * * *'")
                    .contains("last run: failed").contains("last run: succeeded");

            // the server goes down: the next scheduled run fails on the network, retries, and succeeds once it is back
            int before = snapshots(server, "sched");
            assertThat(server.kill()).isTrue();
            DaemonCli.await("a scheduled run retrying", Duration.ofSeconds(30),
                    () -> volume(status(socket), "sched").path("running").path("attempt").asInt() >= 2, d, daemonOut);
            server.startOnSamePorts();
            // the run log, not status: the next scheduled run may replace the last run before a poll sees it
            DaemonCli.await("the retried run committed", Duration.ofSeconds(120), () -> runLog(state).stream().anyMatch(r ->
                    r.path("volume").asText().equals("sched") && r.path("result").asText().equals("succeeded")
                            && r.path("attempts").asInt() >= 2), d, daemonOut);
            assertThat(snapshots(server, "sched")).isGreaterThan(before);
            assertThat(ChildJvm.tail(daemonOut[0], 1 << 20)).contains("volume sched: try 1 of 1000 failed on the network")
                    .containsPattern("volume sched: run succeeded: snapshot sched@\\d+ committed \\(incremental\\) on try \\d+");
            assertThat(runLog(state)).as("every run recorded").anyMatch(r -> r.path("volume").asText().equals("hooked"));

            // the daemon reported its runs to the server: the retried one with its tries, and the failed pre hook
            DaemonCli.await("the retried run in /api/v1/agents", Duration.ofSeconds(60), () -> DaemonCli.serverRuns(server).stream().anyMatch(r ->
                    r.path("volume").asText().equals("sched") && r.path("result").asText().equals("succeeded")
                            && r.path("attempts").asInt() >= 2 && r.path("consistency").asText().equals("application")), d, daemonOut);
            assertThat(DaemonCli.serverRuns(server)).anyMatch(r -> r.path("volume").asText().equals("hooked")
                    && r.path("result").asText().equals("failed") && r.path("message").asText().contains("pre hook failed"));

            // SIGKILL during a run (in its pre hook): the next daemon runs the post hook, records the run as
            // interrupted, and the next scheduled run commits
            DaemonCli.await("a scheduled run in its pre hook", Duration.ofSeconds(30), () -> {
                JsonNode running = volume(status(socket), "sched").path("running");
                return running.isObject() && running.path("attempt").asInt() == 0;
            }, d, daemonOut);
            assertThat(ChildJvm.sigkill(daemon)).as("SIGKILL ended the daemon").isTrue();
            assertThat(state.resolve("running").resolve("sched.json")).as("the run's marker outlives the daemon").exists();
            int beforeRestart = snapshots(server, "sched");
            long interruptedBefore = schedRuns(state, "interrupted");
            long succeededBefore = schedRuns(state, "succeeded");
            Path[] restartOut = logs.next("daemon-restart");
            daemon = DaemonCli.start(config, restartOut);
            Process restarted = daemon;
            DaemonCli.await("the killed run recorded as interrupted", Duration.ofSeconds(60),
                    () -> schedRuns(state, "interrupted") > interruptedBefore, restarted, restartOut);
            assertThat(Files.readAllLines(schedPost)).as("post hook results").last().isEqualTo("interrupted");
            DaemonCli.await("a scheduled run after the restart", Duration.ofSeconds(60),
                    () -> schedRuns(state, "succeeded") > succeededBefore, restarted, restartOut);
            assertThat(snapshots(server, "sched")).isGreaterThan(beforeRestart);
            assertThat(Files.readAllLines(schedPost)).contains("succeeded", "interrupted");
        } finally {
            if (daemon != null) {
                daemon.destroy(); // SIGTERM: the daemon stops its runs and removes its socket
                assertThat(daemon.waitFor(30, TimeUnit.SECONDS)).as("daemon stopped on SIGTERM").isTrue();
            }
            server.close();
        }
        assertThat(state.resolve("agent.sock")).doesNotExist();
    }

    private static JsonNode status(Path socket) throws IOException {
        DaemonCli.Result c = DaemonCli.run("status", "--json", "--socket", socket.toString());
        assertThat(c.exit()).as(c.toString()).isZero();
        return JSON.readTree(c.out());
    }

    private static JsonNode volume(JsonNode status, String name) {
        for (JsonNode v : status.path("volumes")) {
            if (v.path("name").asText().equals(name)) {
                return v;
            }
        }
        throw new AssertionError("no volume " + name + " in " + status);
    }

    private static int snapshots(ServerProcess server, String volume) throws IOException {
        HttpResponse<String> r = server.get("/api/v1/volumes/" + volume + "/snapshots");
        return r.statusCode() == 200 ? JSON.readTree(r.body()).size() : 0;
    }

    private static List<JsonNode> runLog(Path state) throws IOException {
        List<JsonNode> out = new java.util.ArrayList<>();
        for (String line : Files.readAllLines(state.resolve("runs.jsonl"))) {
            try {
                out.add(JSON.readTree(line));
            } catch (IOException e) {
                // a line being appended right now
            }
        }
        return out;
    }

    /** Runs of sched in the run log with this result and their post hook run. */
    private static long schedRuns(Path state, String result) throws IOException {
        return runLog(state).stream().filter(r -> r.path("volume").asText().equals("sched")
                && r.path("result").asText().equals(result) && r.path("postHook").asText().equals("exit 0")).count();
    }
}
