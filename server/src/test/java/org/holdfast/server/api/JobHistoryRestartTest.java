package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.catalog.JobStore;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The job history across restarts of a real server: ended jobs stay, cut-off ones show as interrupted, ids go on. */
class JobHistoryRestartTest {
    @TempDir
    Path data;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();
    private int port;

    private ConfigurableApplicationContext start() {
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(HoldfastServer.class).run(
                "--holdfast.data-dir=" + data, "--server.port=0", "--server.address=127.0.0.1", "--holdfast.tls.enabled=false",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--spring.main.banner-mode=off");
        port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
        return ctx;
    }

    private HttpResponse<String> call(String method, String path, String token) {
        return RestCalls.call(http, port, method, path, null, token);
    }

    @Test
    void restart_endedJobsStay_runningOnesCancelledOrInterrupted_idsContinue() throws Exception {
        long fsckId;
        long loopId;
        try (ConfigurableApplicationContext ctx = start()) {
            String token = TestTokens.issue(ctx, Role.OPERATOR);
            HttpResponse<String> started = call("POST", "/api/v1/gc/fsck", token);
            assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
            String location = started.headers().firstValue("Location").orElseThrow();
            JobPolling.awaitResult(path -> call("GET", path, token).body(), location);
            fsckId = json.readTree(started.body()).get("id").asLong();
            // a job still running when the server stops is cancelled at its safe point, and recorded so
            CountDownLatch running = new CountDownLatch(1);
            loopId = ctx.getBean(Jobs.class).submit("test", "restart-test", "t", job -> {
                running.countDown();
                while (true) {
                    job.checkpoint();
                    Thread.sleep(2);
                }
            }).id();
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
        }
        // what a server killed in the middle of a job leaves behind: a record that still says running
        long cutOffId = loopId + 100;
        try (MetadataDb db = MetadataDb.open(data.resolve("catalog"))) {
            Instant t = Instant.parse("2026-11-23T10:00:00Z");
            new JobStore(db, Jobs.HISTORY, Clock.systemUTC()).save(new Job(cutOffId, "gc-cycle", JobState.RUNNING, "schedule", t, t,
                    null, new Job.Progress(2, 5, 0, -1, 1, 0, 3L), false, null, null, List.of("retention: planning 5 volumes")));
        }
        try (ConfigurableApplicationContext ctx = start()) {
            String viewer = TestTokens.issue(ctx, Role.VIEWER);
            JsonNode fsck = json.readTree(call("GET", "/api/v1/jobs/" + fsckId, viewer).body());
            assertThat(fsck.get("state").asText()).isEqualTo("succeeded");
            assertThat(fsck.get("result").get("clean").asBoolean()).isTrue();
            assertThat(fsck.get("log").toString()).contains("fsck mark");

            JsonNode loop = json.readTree(call("GET", "/api/v1/jobs/" + loopId, viewer).body());
            assertThat(loop.get("state").asText()).isEqualTo("cancelled");
            assertThat(loop.get("error").asText()).contains("server stopped");

            JsonNode cut = json.readTree(call("GET", "/api/v1/jobs/" + cutOffId, viewer).body());
            assertThat(cut.get("state").asText()).isEqualTo("failed");
            assertThat(cut.get("error").asText()).contains("interrupted by a restart");
            assertThat(cut.get("endedAt").asText()).isNotEmpty();
            assertThat(cut.get("progress").get("itemsDone").asLong()).isEqualTo(2);

            JsonNode running = json.readTree(call("GET", "/api/v1/jobs?state=running", viewer).body());
            assertThat(running.get("jobs")).as("nothing stays running across a restart").isEmpty();

            String operator = TestTokens.issue(ctx, Role.OPERATOR);
            HttpResponse<String> next = call("POST", "/api/v1/gc/runs", operator);
            assertThat(json.readTree(next.body()).get("id").asLong()).as("ids continue after the stored ones")
                    .isGreaterThan(cutOffId);
            assertThat(call("POST", "/api/v1/jobs/" + cutOffId + "/cancel", operator).statusCode()).isEqualTo(409);
            JobPolling.awaitResult(path -> call("GET", path, operator).body(), next.headers().firstValue("Location").orElseThrow());
        }
    }
}
