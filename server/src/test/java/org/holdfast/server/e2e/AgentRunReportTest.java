package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Consistency and run reports between a real {@code holdfast-agent daemon} process and a real server:
 * a volume whose pre hook succeeds becomes an application-consistent snapshot, one without hooks a
 * crash-consistent one (both shown in the snapshot JSON); the daemon reports each run, the failed
 * pre hook included, and {@code GET /api/v1/agents} shows them; a report for a volume outside the
 * token's scope is refused and changes nothing.
 */
class AgentRunReportTest {
    private static final LogDir logs = new LogDir("AgentRunReportTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NEVER = "0 0 1 1 *";

    @TempDir
    Path work;

    @Test
    void daemon_hookedAndPlainBackupsAndAFailedHook_consistencyAndRunsShownByTheApi() throws Exception {
        Path app = VolumeImage.generate(21, 1 << 20).writeTo(work.resolve("app.img"));
        Path plain = VolumeImage.generate(22, 1 << 20).writeTo(work.resolve("plain.img"));
        Path frozen = VolumeImage.generate(23, 1 << 20).writeTo(work.resolve("frozen.img"));
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
                    retry: {attempts: 3, initial-backoff: 300ms, max-backoff: 1s}
                    volumes:
                      - name: app
                        source: %s
                        schedule: "%s"
                        hooks: {pre: "true", post: "true"}
                      - name: plain
                        source: %s
                        schedule: "%s"
                      - name: frozen
                        source: %s
                        schedule: "%s"
                        hooks:
                          pre: "echo cannot freeze >&2; exit 7"
                    """.formatted(server.ingestAddress(), server.fingerprint(), server.agentTokenFile(), state, app, NEVER, plain,
                    NEVER, frozen, NEVER));
            daemon = DaemonCli.start(config, daemonOut);
            Path socket = state.resolve("agent.sock");
            DaemonCli.await("the control socket", Duration.ofSeconds(60), () -> Files.exists(socket), daemon, daemonOut);

            for (String v : List.of("app", "plain")) {
                DaemonCli.Result run = DaemonCli.run("run-now", "--volume", v, "--socket", socket.toString());
                assertThat(run.exit()).as(run.toString()).isZero();
            }
            DaemonCli.Result failed = DaemonCli.run("run-now", "--volume", "frozen", "--socket", socket.toString());
            assertThat(failed.exit()).as(failed.toString()).isEqualTo(5);

            // the snapshot JSON says how consistent each snapshot is
            assertThat(snapshot(server, "app").path("consistency").asText()).isEqualTo("application");
            assertThat(snapshot(server, "plain").path("consistency").asText()).isEqualTo("crash");

            // every run reaches the agents endpoint, the failed pre hook included
            Process d = daemon;
            DaemonCli.await("three runs in /api/v1/agents", Duration.ofSeconds(60), () -> DaemonCli.serverRuns(server).size() >= 3, d, daemonOut);
            JsonNode appRun = run(server, "app");
            assertThat(appRun.path("result").asText()).isEqualTo("succeeded");
            assertThat(appRun.path("snapshotId").asText()).isEqualTo("app@1");
            assertThat(appRun.path("consistency").asText()).isEqualTo("application");
            assertThat(appRun.path("bytesRead").asLong()).isEqualTo(1 << 20);
            assertThat(appRun.path("trigger").asText()).isEqualTo("run-now");
            assertThat(appRun.path("agentVersion").asText()).isNotEmpty();
            assertThat(run(server, "plain").path("consistency").asText()).isEqualTo("crash");
            JsonNode frozenRun = run(server, "frozen");
            assertThat(frozenRun.path("result").asText()).isEqualTo("failed");
            assertThat(frozenRun.path("exitCode").asInt()).isEqualTo(5);
            assertThat(frozenRun.path("message").asText()).contains("pre hook failed (exit 7: cannot freeze); backup skipped");
            assertThat(frozenRun.path("snapshotId").isNull()).isTrue();
            assertThat(server.get("/api/v1/volumes/frozen/snapshots").statusCode()).isEqualTo(404);

            // a token scoped to 'plain' cannot report runs of another volume: refused, nothing recorded
            HttpResponse<String> issued = server.call("POST", "/api/v1/tokens",
                    "{\"name\":\"scoped\",\"role\":\"agent\",\"volumes\":[\"plain\"]}");
            assertThat(issued.statusCode()).as(issued.body()).isEqualTo(201);
            Path scopedToken = Files.writeString(work.resolve("scoped.token"), JSON.readTree(issued.body()).path("token").asText());
            String before = DaemonCli.serverRuns(server).toString();
            List<String> args = new ArrayList<>(List.of("report-run", "--server", server.ingestAddress(), "--volume", "app",
                    "--token-file", scopedToken.toString(), "--known-servers", work.resolve("known").toString(),
                    "--start", "2026-01-01T00:00:00Z", "--end", "2026-01-01T00:00:01Z", "--result", "succeeded"));
            args.addAll(server.agentTrustArgs());
            DaemonCli.Result outside = DaemonCli.run(args.toArray(String[]::new));
            assertThat(outside.exit()).as(outside.toString()).isEqualTo(4);
            assertThat(outside.err()).contains("outside the token's volume scope");
            assertThat(DaemonCli.serverRuns(server).toString()).as("nothing recorded").isEqualTo(before);
        } finally {
            if (daemon != null) {
                daemon.destroy();
                assertThat(daemon.waitFor(30, TimeUnit.SECONDS)).as("daemon stopped on SIGTERM").isTrue();
            }
            server.close();
        }
    }

    private static JsonNode snapshot(ServerProcess server, String volume) throws Exception {
        HttpResponse<String> r = server.get("/api/v1/volumes/" + volume + "/snapshots");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode list = JSON.readTree(r.body());
        assertThat(list.size()).isEqualTo(1);
        return list.get(0);
    }

    private static JsonNode run(ServerProcess server, String volume) throws Exception {
        return DaemonCli.serverRuns(server).stream().filter(r -> r.path("volume").asText().equals(volume)).findFirst()
                .orElseThrow(() -> new AssertionError("no run of " + volume + " in " + server.get("/api/v1/agents").body()));
    }
}
