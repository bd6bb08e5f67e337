package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The appliance as wired by Spring: REST views of what an agent backed up, problem details, actuator. */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
class VolumeApiTest {
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-api-test");
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

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void springErrors_malformedJsonOrWrongPathType_invalidRequestProblemDetails() throws Exception {
        org.springframework.http.HttpHeaders h = new org.springframework.http.HttpHeaders();
        h.setContentType(org.springframework.http.MediaType.APPLICATION_JSON);
        ResponseEntity<String> badJson = rest.exchange("/api/v1/volumes/nobody/retention", org.springframework.http.HttpMethod.PUT,
                new org.springframework.http.HttpEntity<>("{\"policy\": ", h), String.class);
        assertThat(badJson.getStatusCode().value()).as(badJson.getBody()).isEqualTo(400);
        assertThat(json.readTree(badJson.getBody()).get("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");
        assertThat(json.readTree(badJson.getBody()).get("detail").asText()).contains("not valid JSON");

        ResponseEntity<String> wrongType = rest.getForEntity("/api/v1/volumes?limit=abc", String.class);
        assertThat(wrongType.getStatusCode().value()).as(wrongType.getBody()).isEqualTo(400);
        assertThat(json.readTree(wrongType.getBody()).get("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");

        assertThat(rest.getForEntity("/api/v1/volumes/nobody", String.class).getStatusCode().value()).isEqualTo(404);
    }

    @Test
    void snapshots_afterABackup_listedAsJson() throws Exception {
        byte[] img = new byte[40 * 4096];
        new Random(1).nextBytes(img);
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, org.holdfast.server.security.Role.AGENT))) {
            a.hello();
            a.backup("api-vol", img, 4096, true);
            a.backup("api-vol", img, 4096, true);
        }
        ResponseEntity<String> volumes = rest.getForEntity("/api/v1/volumes", String.class);
        assertThat(volumes.getStatusCode().value()).isEqualTo(200);
        JsonNode v = json.readTree(volumes.getBody());
        assertThat(v.isArray()).isTrue();
        assertThat(v.findValuesAsText("name")).contains("api-vol");

        ResponseEntity<String> snaps = rest.getForEntity("/api/v1/volumes/api-vol/snapshots", String.class);
        assertThat(snaps.getStatusCode().value()).isEqualTo(200);
        JsonNode s = json.readTree(snaps.getBody());
        assertThat(s).hasSize(2);
        assertThat(s.get(0).get("sequence").asLong()).isEqualTo(1);
        assertThat(s.get(0).get("id").asText()).isEqualTo("api-vol@1");
        assertThat(s.get(0).get("logicalBytes").asLong()).isEqualTo(img.length);
        assertThat(s.get(1).get("changedBlocks").asLong()).isZero();
    }

    @Test
    void snapshots_unknownVolume_notFoundProblemDetail() throws Exception {
        ResponseEntity<String> r = rest.getForEntity("/api/v1/volumes/no-such-volume/snapshots", String.class);
        assertThat(r.getStatusCode().value()).isEqualTo(404);
        assertThat(r.getHeaders().getContentType()).isNotNull();
        assertThat(r.getHeaders().getContentType().toString()).contains("application/problem+json");
        JsonNode p = json.readTree(r.getBody());
        assertThat(p.get("type").asText()).isEqualTo(ProblemTypes.UNKNOWN_VOLUME.toString());
        assertThat(p.get("status").asInt()).isEqualTo(404);
        assertThat(p.get("detail").asText()).contains("no-such-volume");
    }

    @Test
    void snapshots_invalidVolumeName_notFound() {
        ResponseEntity<String> r = rest.getForEntity("/api/v1/volumes/" + "v".repeat(129) + "/snapshots", String.class);
        assertThat(r.getStatusCode().value()).isEqualTo(404);
    }

    @Test
    void actuator_healthAndPrometheus_answerOnServerPort() {
        ResponseEntity<String> health = rest.getForEntity("/actuator/health", String.class);
        assertThat(health.getStatusCode().value()).isEqualTo(200);
        assertThat(health.getBody()).contains("\"UP\"");
        ResponseEntity<String> prom = rest.getForEntity("/actuator/prometheus", String.class);
        assertThat(prom.getStatusCode().value()).isEqualTo(200);
        assertThat(prom.getBody()).contains("holdfast_store_next_pbn");
    }
}
