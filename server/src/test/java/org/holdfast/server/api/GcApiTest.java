package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** GC over REST: retention policy, holds, runs on demand, status and fsck, on the wired appliance. */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GcApiTest {
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-gc-api-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry r) {
        r.add("holdfast.data-dir", DATA::toString);
        r.add("holdfast.tls.enabled", () -> "false"); // TestRestTemplate speaks plain HTTP; TLS is tested end to end
        r.add("holdfast.ingest.host", () -> "127.0.0.1");
        r.add("holdfast.ingest.port", () -> "0");
        r.add("holdfast.store.min-free-space", () -> "0");
    }

    @Autowired
    TestRestTemplate rest;

    @Autowired
    org.springframework.context.ApplicationContext context;

    @org.junit.jupiter.api.BeforeEach
    void authenticate() {
        TestTokens.authorize(rest, TestTokens.issue(context, org.holdfast.server.security.Role.ADMIN));
    }

    @Autowired
    IngestServer ingest;

    @Autowired
    GcService gc;

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void retentionHoldsRunsAndFsck_overRest() throws Exception {
        byte[] img = new byte[32 * 4096];
        new Random(3).nextBytes(img);
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, org.holdfast.server.security.Role.AGENT))) {
            a.hello();
            a.backup("gc-api", img, 4096, true);
            img[5] ^= 1;
            a.backup("gc-api", img, 4096, true);
        }
        ResponseEntity<String> put = rest.exchange("/api/v1/volumes/gc-api/retention", HttpMethod.PUT,
                new HttpEntity<>(Map.of("policy", "keep-last=3,daily=7")), String.class);
        assertThat(put.getStatusCode().value()).as(put.getBody()).isEqualTo(200);
        assertThat(json.readTree(put.getBody()).get("policy").asText()).isEqualTo("keep-last=3,daily=7");

        ResponseEntity<String> bad = rest.exchange("/api/v1/volumes/gc-api/retention", HttpMethod.PUT,
                new HttpEntity<>(Map.of("policy", "forever")), String.class);
        assertThat(bad.getStatusCode().value()).isEqualTo(400);
        assertThat(rest.getForEntity("/api/v1/volumes/gc-api/retention", String.class).getBody()).contains("daily=7");

        ResponseEntity<String> hold = rest.exchange("/api/v1/volumes/gc-api/snapshots/1/hold", HttpMethod.PUT,
                HttpEntity.EMPTY, String.class);
        assertThat(hold.getStatusCode().value()).isEqualTo(200);
        assertThat(json.readTree(hold.getBody()).get("held").asBoolean()).isTrue();

        ResponseEntity<String> run = rest.postForEntity("/api/v1/gc/runs", null, String.class);
        assertThat(run.getStatusCode().value()).as(run.getBody()).isEqualTo(202);
        JsonNode r = JobPolling.awaitResult(this::get, run.getHeaders().getLocation().toString());
        assertThat(r.get("sweep").get("freed").asLong()).isZero();
        assertThat(r.get("compaction").get("bytesReclaimed").asLong()).isZero(); // the run compacts too; nothing to do yet

        JsonNode f = fsck();
        assertThat(f.get("snapshotsChecked").asLong()).isEqualTo(2);
        assertThat(f.get("referencedButFreed").get("count").asLong()).isZero();
        assertThat(f.get("rcMismatches").get("count").asLong()).isZero();
        assertThat(f.get("etMismatches").get("count").asLong()).isZero();

        // releasing a hold (a governance lock) needs an admin: an operator is refused and the hold stays
        TestTokens.authorize(rest, TestTokens.issue(context, org.holdfast.server.security.Role.OPERATOR));
        ResponseEntity<String> refused = rest.exchange("/api/v1/volumes/gc-api/snapshots/1/hold", HttpMethod.DELETE,
                HttpEntity.EMPTY, String.class);
        assertThat(refused.getStatusCode().value()).as(refused.getBody()).isEqualTo(403);
        assertThat(json.readTree(rest.getForEntity("/api/v1/volumes/gc-api/snapshots/1/hold", String.class).getBody())
                .get("held").asBoolean()).isTrue();
        TestTokens.authorize(rest, TestTokens.issue(context, org.holdfast.server.security.Role.ADMIN));
        ResponseEntity<String> release = rest.exchange("/api/v1/volumes/gc-api/snapshots/1/hold", HttpMethod.DELETE,
                HttpEntity.EMPTY, String.class);
        assertThat(release.getStatusCode().value()).as(release.getBody()).isEqualTo(200);
        assertThat(json.readTree(rest.getForEntity("/api/v1/volumes/gc-api/snapshots/1/hold", String.class).getBody())
                .get("held").asBoolean()).isFalse();
        JsonNode status = json.readTree(rest.getForEntity("/api/v1/gc/status", String.class).getBody());
        assertThat(status.get("lastRun").get("compaction").get("logsExamined").isNumber()).isTrue();
        assertThat(status.get("compaction").get("runs").asLong()).isPositive();
        assertThat(rest.exchange("/api/v1/volumes/gc-api/snapshots/99/hold", HttpMethod.PUT, HttpEntity.EMPTY,
                String.class).getStatusCode().value()).isEqualTo(404);
        assertThat(rest.getForEntity("/api/v1/volumes/nope/retention", String.class).getStatusCode().value()).isEqualTo(404);
    }

    @Test
    void deleteVolumeAndSnapshot_overRest_conflictsAreProblemsAndChangeNothing() throws Exception {
        byte[] img = new byte[16 * 4096];
        new Random(4).nextBytes(img);
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, org.holdfast.server.security.Role.AGENT))) {
            a.hello();
            a.backup("gc-del", img, 4096, true);
            img[7] ^= 1;
            a.backup("gc-del", img, 4096, true);
            img[9000] ^= 1;
            a.backup("gc-del", img, 4096, true);
        }
        rest.exchange("/api/v1/volumes/gc-del/snapshots/1/hold", HttpMethod.PUT, HttpEntity.EMPTY, String.class);
        ResponseEntity<String> refused = rest.exchange("/api/v1/volumes/gc-del", HttpMethod.DELETE, HttpEntity.EMPTY, String.class);
        assertThat(refused.getStatusCode().value()).as(refused.getBody()).isEqualTo(409);
        JsonNode p = json.readTree(refused.getBody());
        assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:conflict");
        assertThat(p.get("detail").asText()).contains("hold");
        ResponseEntity<String> newest = rest.exchange("/api/v1/volumes/gc-del/snapshots/3", HttpMethod.DELETE, HttpEntity.EMPTY, String.class);
        assertThat(newest.getStatusCode().value()).isEqualTo(409);
        assertThat(rest.exchange("/api/v1/volumes/gc-del/snapshots/2", HttpMethod.DELETE, HttpEntity.EMPTY, String.class)
                .getStatusCode().value()).isEqualTo(204);
        assertThat(rest.exchange("/api/v1/volumes/gc-del/snapshots/2", HttpMethod.DELETE, HttpEntity.EMPTY, String.class)
                .getStatusCode().value()).isEqualTo(404);
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, org.holdfast.server.security.Role.AGENT))) {
            a.hello();
            assertThat(a.restore("gc-del", 3).image()).isEqualTo(img);
        }
        assertThat(rest.exchange("/api/v1/volumes/gc-del/snapshots/1/hold", HttpMethod.DELETE, HttpEntity.EMPTY, String.class)
                .getStatusCode().value()).isEqualTo(200); // the caller is an admin
        ResponseEntity<String> gone = rest.exchange("/api/v1/volumes/gc-del", HttpMethod.DELETE, HttpEntity.EMPTY, String.class);
        assertThat(gone.getStatusCode().value()).as(gone.getBody()).isEqualTo(200);
        assertThat(json.readTree(gone.getBody()).get("snapshotsDeleted").asInt()).isEqualTo(2);
        assertThat(rest.exchange("/api/v1/volumes/gc-del", HttpMethod.DELETE, HttpEntity.EMPTY, String.class)
                .getStatusCode().value()).isEqualTo(404);
        JsonNode f = fsck();
        assertThat(f.get("referencedButFreed").get("count").asLong()).isZero();
        assertThat(f.get("rcMismatches").get("count").asLong()).isZero();
        assertThat(f.get("etMismatches").get("count").asLong()).isZero();
    }

    /** reclaim-now's compactionThreshold: out of 0..1 it is refused with the reason and starts no job; in range its compaction applies it. */
    @Test
    void reclaim_compactionThreshold_outOfRangeIs400AndStartsNothing_inRangeApplies() throws Exception {
        int before = json.readTree(get("/api/v1/jobs?kind=reclaim")).get("jobs").size();
        ResponseEntity<String> bad = rest.postForEntity("/api/v1/gc/reclaim?compactionThreshold=1.5", null, String.class);
        assertThat(bad.getStatusCode().value()).as(bad.getBody()).isEqualTo(400);
        assertThat(bad.getBody()).contains("compactionThreshold must be a live share in 0..1").contains("no reclaim-now was started");
        assertThat(json.readTree(get("/api/v1/jobs?kind=reclaim")).get("jobs").size()).isEqualTo(before);

        ResponseEntity<String> ok = rest.postForEntity("/api/v1/gc/reclaim?compactionThreshold=1", null, String.class);
        assertThat(ok.getStatusCode().value()).as(ok.getBody()).isEqualTo(202);
        JsonNode r = JobPolling.awaitResult(this::get, ok.getHeaders().getLocation().toString());
        assertThat(r.get("compaction").get("threshold").asDouble()).as("%s", r).isEqualTo(1.0);
        assertThat(r.get("compaction").has("logsTrimmed")).as("%s", r).isTrue();
    }

    private String get(String path) {
        return rest.getForEntity(path, String.class).getBody();
    }

    /** Starts fsck as a job and waits for its report. */
    private JsonNode fsck() {
        ResponseEntity<String> started = rest.postForEntity("/api/v1/gc/fsck", null, String.class);
        assertThat(started.getStatusCode().value()).as(started.getBody()).isEqualTo(202);
        return JobPolling.awaitResult(this::get, started.getHeaders().getLocation().toString());
    }
}
