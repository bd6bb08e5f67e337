package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Jobs over REST: GC work answers 202 with a Location to poll; listing, cancelling, unknown ids, roles. */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class JobApiTest {
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-job-api-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry r) {
        r.add("holdfast.data-dir", DATA::toString);
        r.add("holdfast.tls.enabled", () -> "false");
        r.add("holdfast.ingest.host", () -> "127.0.0.1");
        r.add("holdfast.ingest.port", () -> "0");
        r.add("holdfast.store.min-free-space", () -> "0");
    }

    @Autowired
    TestRestTemplate rest;

    @Autowired
    ApplicationContext context;

    @Autowired
    Jobs jobs;

    private final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void operator() {
        as(Role.OPERATOR);
    }

    private void as(Role role) {
        TestTokens.authorize(rest, TestTokens.issue(context, role));
    }

    private String get(String path) {
        return rest.getForEntity(path, String.class).getBody();
    }

    private JsonNode body(ResponseEntity<String> r) throws IOException {
        return json.readTree(r.getBody());
    }

    @Test
    void gcRun_answers202WithLocation_pollsToSucceeded_thenListedNewestFirst() throws Exception {
        ResponseEntity<String> started = rest.postForEntity("/api/v1/gc/runs", null, String.class);
        assertThat(started.getStatusCode().value()).as(started.getBody()).isEqualTo(202);
        JsonNode job = body(started);
        String location = started.getHeaders().getLocation().toString();
        assertThat(location).isEqualTo("/api/v1/jobs/" + job.get("id").asLong()).isEqualTo(job.get("url").asText());
        assertThat(job.get("kind").asText()).isEqualTo("gc-cycle");
        assertThat(job.get("state").asText()).isIn("queued", "running", "succeeded");
        assertThat(job.get("submittedBy").asText()).startsWith("token:");
        assertThat(job.get("submittedAt").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");

        JsonNode done = JobPolling.awaitEnd(this::get, location);
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("succeeded");
        assertThat(done.get("result").get("sweep").get("freed").isNumber()).isTrue();
        assertThat(done.get("result").has("compaction")).isTrue();
        assertThat(done.get("progress").get("itemsDone").asLong()).isEqualTo(done.get("progress").get("itemsTotal").asLong());
        assertThat(done.get("progress").get("etaSeconds").isNull()).isTrue();
        assertThat(done.get("startedAt").asText()).isNotEmpty();
        assertThat(done.get("endedAt").asText()).isNotEmpty();
        assertThat(done.get("log").toString()).contains("retention:").contains("sweep:").contains("compaction:");

        ResponseEntity<String> fsck = rest.postForEntity("/api/v1/gc/fsck", null, String.class);
        assertThat(fsck.getStatusCode().value()).isEqualTo(202);
        JsonNode report = JobPolling.awaitResult(this::get, fsck.getHeaders().getLocation().toString());
        assertThat(report.get("clean").asBoolean()).as(report.toString()).isTrue();
        ResponseEntity<String> compaction = rest.postForEntity("/api/v1/gc/compactions", null, String.class);
        assertThat(compaction.getStatusCode().value()).isEqualTo(202);
        assertThat(JobPolling.awaitEnd(this::get, compaction.getHeaders().getLocation().toString()).get("kind").asText())
                .isEqualTo("compaction");

        as(Role.VIEWER); // reading is a viewer's
        JsonNode page = json.readTree(get("/api/v1/jobs?kind=gc-cycle&limit=1"));
        assertThat(page.get("jobs")).hasSize(1);
        assertThat(page.get("jobs").get(0).get("kind").asText()).isEqualTo("gc-cycle");
        JsonNode all = json.readTree(get("/api/v1/jobs?state=succeeded"));
        long previous = Long.MAX_VALUE;
        for (JsonNode j : all.get("jobs")) {
            assertThat(j.get("id").asLong()).as("newest first").isLessThan(previous);
            assertThat(j.get("state").asText()).isEqualTo("succeeded");
            previous = j.get("id").asLong();
        }
        assertThat(all.get("jobs").size()).isGreaterThanOrEqualTo(3);
        JsonNode firstPage = json.readTree(get("/api/v1/jobs?limit=1"));
        JsonNode secondPage = json.readTree(get("/api/v1/jobs?limit=1&cursor=" + firstPage.get("nextCursor").asText()));
        assertThat(secondPage.get("jobs").get(0).get("id").asLong()).isLessThan(firstPage.get("jobs").get(0).get("id").asLong());
    }

    @Test
    void badListQueries_are400ProblemDetails() throws Exception {
        for (String q : new String[] {"state=bogus", "limit=0", "limit=501", "cursor=abc", "limit=x"}) {
            ResponseEntity<String> r = rest.getForEntity("/api/v1/jobs?" + q, String.class);
            assertThat(r.getStatusCode().value()).as(q + ": " + r.getBody()).isEqualTo(400);
            assertThat(body(r).get("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");
        }
    }

    @Test
    void unknownJobIds_are404ProblemDetails() throws Exception {
        for (String id : new String[] {"999999", "abc", "0", "-1", "99999999999999999999"}) {
            ResponseEntity<String> r = rest.getForEntity("/api/v1/jobs/" + id, String.class);
            assertThat(r.getStatusCode().value()).as(id).isEqualTo(404);
            assertThat(body(r).get("type").asText()).isEqualTo("urn:holdfast:problem:unknown-job");
            ResponseEntity<String> c = rest.postForEntity("/api/v1/jobs/" + id + "/cancel", null, String.class);
            assertThat(c.getStatusCode().value()).as(id).isEqualTo(404);
        }
    }

    @Test
    void viewer_cannotStartOrCancelJobs_403AndNothingStarts() throws Exception {
        long before = jobs.list(new Jobs.Query(null, null, null, Jobs.MAX_LIMIT)).jobs().size();
        as(Role.VIEWER);
        for (String path : new String[] {"/api/v1/gc/runs", "/api/v1/gc/fsck", "/api/v1/gc/compactions", "/api/v1/gc/reclaim"}) {
            ResponseEntity<String> r = rest.postForEntity(path, null, String.class);
            assertThat(r.getStatusCode().value()).as(path).isEqualTo(403);
            assertThat(body(r).get("type").asText()).isEqualTo("urn:holdfast:problem:forbidden");
        }
        Job mine = jobs.submit("test", "viewer-test", "t", job -> Map.of());
        jobs.await(mine.id(), java.time.Duration.ofSeconds(30));
        assertThat(rest.postForEntity("/api/v1/jobs/" + mine.id() + "/cancel", null, String.class).getStatusCode().value())
                .isEqualTo(403);
        as(Role.AGENT);
        assertThat(rest.getForEntity("/api/v1/jobs", String.class).getStatusCode().value()).isEqualTo(403);
        assertThat(jobs.list(new Jobs.Query(null, null, null, Jobs.MAX_LIMIT)).jobs()).hasSize((int) before + 1);
    }

    @Test
    void cancel_queuedGcJob_dropped202_thenCancelAgainIs409() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Job blocker = jobs.submit("test", GcJobs.LANE, "t", job -> {
            started.countDown();
            release.await(60, TimeUnit.SECONDS);
            return Map.of();
        });
        try {
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            ResponseEntity<String> fsck = rest.postForEntity("/api/v1/gc/fsck", null, String.class);
            assertThat(fsck.getStatusCode().value()).isEqualTo(202);
            assertThat(body(fsck).get("state").asText()).as("queued behind the running GC-lane job").isEqualTo("queued");
            String url = fsck.getHeaders().getLocation().toString();

            ResponseEntity<String> cancel = rest.postForEntity(url + "/cancel", null, String.class);
            assertThat(cancel.getStatusCode().value()).as(cancel.getBody()).isEqualTo(202);
            assertThat(cancel.getHeaders().getLocation().toString()).isEqualTo(url);
            assertThat(body(cancel).get("state").asText()).isEqualTo("cancelled");

            ResponseEntity<String> again = rest.postForEntity(url + "/cancel", null, String.class);
            assertThat(again.getStatusCode().value()).isEqualTo(409);
            JsonNode p = body(again);
            assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:job-finished");
            assertThat(p.get("state").asText()).isEqualTo("cancelled");
            release.countDown();
            jobs.await(blocker.id(), java.time.Duration.ofSeconds(30));
            JsonNode after = json.readTree(get(url));
            assertThat(after.get("state").asText()).isEqualTo("cancelled");
            assertThat(after.get("startedAt").isNull()).as("a dropped job never runs").isTrue();
        } finally {
            release.countDown();
        }
        as(Role.ADMIN);
        JsonNode audit = json.readTree(get("/api/v1/audit?action=job.cancel"));
        assertThat(audit.toString()).contains("job:").contains("\"ok\"").contains("\"conflict\"");
    }

    @Test
    void cancel_runningJob_202ThenStopsAtItsCheckpoint() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        Job loop = jobs.submit("test", "cancel-test", "t", job -> {
            job.total(1_000_000, -1);
            running.countDown();
            for (int i = 0; i < 1_000_000; i++) {
                job.checkpoint();
                job.advance(1, 0);
                Thread.sleep(1);
            }
            return Map.of();
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
        ResponseEntity<String> cancel = rest.postForEntity("/api/v1/jobs/" + loop.id() + "/cancel", null, String.class);
        assertThat(cancel.getStatusCode().value()).isEqualTo(202);
        assertThat(body(cancel).get("cancelRequested").asBoolean()).isTrue();
        JsonNode ended = JobPolling.awaitEnd(this::get, "/api/v1/jobs/" + loop.id());
        assertThat(ended.get("state").asText()).isEqualTo("cancelled");
        assertThat(ended.get("error").asText()).contains("cancelled by token:").contains("safe point");
        assertThat(ended.get("progress").get("itemsDone").asLong()).isLessThan(1_000_000);
    }

    @Test
    void reclaim_startsAsJob_andSucceedsWithWhatItFreed() throws Exception {
        ResponseEntity<String> started = rest.postForEntity("/api/v1/gc/reclaim", null, String.class);
        assertThat(started.getStatusCode().value()).isEqualTo(202);
        JsonNode ended = JobPolling.awaitEnd(this::get, started.getHeaders().getLocation().toString());
        assertThat(ended.get("kind").asText()).isEqualTo("reclaim");
        assertThat(ended.get("state").asText()).as(ended.toString()).isEqualTo("succeeded");
        assertThat(ended.get("result").has("bytesFreed")).as(ended.toString()).isTrue();
        assertThat(ended.get("result").has("blocksFreed")).as(ended.toString()).isTrue();
    }
}
