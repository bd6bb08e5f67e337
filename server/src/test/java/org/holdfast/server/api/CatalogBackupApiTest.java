package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Random;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Catalog backups over REST on the wired appliance: a job with progress that verifies what it wrote,
 * the list with what each holds and its last verification, a re-check that finds bit rot (health,
 * metric and audit say so), the audit entries.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability
class CatalogBackupApiTest {
    private static final Path DATA;
    private static final Path BACKUPS;
    private static final int BS = 4096;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-catalog-backup-api-test");
            BACKUPS = Files.createTempDirectory("holdfast-catalog-backups");
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
        r.add("holdfast.catalog.backup.directory", BACKUPS::toString);
        r.add("holdfast.catalog.backup.keep", () -> "2");
    }

    @Autowired
    TestRestTemplate rest;

    @Autowired
    ApplicationContext context;

    @Autowired
    IngestServer ingest;

    private final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void authenticate() {
        TestTokens.authorize(rest, TestTokens.issue(context, Role.ADMIN));
    }

    private JsonNode backup() {
        ResponseEntity<String> r = rest.exchange("/api/v1/catalog/backups", HttpMethod.POST, HttpEntity.EMPTY, String.class);
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(202);
        return JobPolling.awaitEnd(p -> rest.getForEntity(p, String.class).getBody(), r.getHeaders().getLocation().getPath());
    }

    @Test
    void backups_runAsJobs_listWhatTheyHold_keepTheNewest_andAreAudited() throws Exception {
        byte[] image = new byte[32 * BS];
        new Random(3).nextBytes(image);
        long before = System.currentTimeMillis();
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, Role.AGENT))) {
            a.hello();
            a.backup("cb-a", image, BS, true);
            a.backup("cb-b", image, BS, true);
        }
        JsonNode first = backup();
        assertThat(first.get("state").asText()).as(first.toString()).isEqualTo("succeeded");
        assertThat(first.get("kind").asText()).isEqualTo("catalog-backup");
        assertThat(first.get("result").get("backupId").asInt()).isEqualTo(1);
        assertThat(first.get("result").get("snapshots").asLong()).isEqualTo(2);
        assertThat(first.get("result").get("bytesCopied").asLong()).isPositive();
        assertThat(first.get("progress").get("bytesDone").asLong()).as(first.toString()).isPositive();

        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, Role.AGENT))) {
            a.hello();
            a.backup("cb-a", image, BS, true);
        }
        assertThat(backup().get("result").get("snapshots").asLong()).isEqualTo(3);
        assertThat(backup().get("result").get("backupId").asInt()).isEqualTo(3);

        JsonNode list = json.readTree(rest.getForEntity("/api/v1/catalog/backups", String.class).getBody());
        assertThat(list).as("keep 2: the newest two, newest first").hasSize(2);
        assertThat(list.get(0).get("id").asInt()).isEqualTo(3);
        assertThat(list.get(1).get("id").asInt()).isEqualTo(2);
        assertThat(list.get(0).get("snapshots").asLong()).isEqualTo(3);
        assertThat(list.get(0).get("bytes").asLong()).isPositive();
        Instant newest = Instant.parse(list.get(0).get("newestSnapshot").asText());
        assertThat(newest.toEpochMilli()).isGreaterThanOrEqualTo(before - 1000);
        assertThat(Instant.parse(list.get(0).get("time").asText()).getEpochSecond()).isGreaterThanOrEqualTo(before / 1000 - 1);

        JsonNode audit = json.readTree(rest.getForEntity("/api/v1/audit?action=catalog.backup", String.class).getBody());
        assertThat(audit.get("entries")).hasSize(3);
        assertThat(audit.get("entries").get(0).get("result").asText()).isEqualTo("ok");

        // each backup was verified as it was written, with checksums
        JsonNode verified = list.get(0).get("verified");
        assertThat(verified.get("result").asText()).as(list.toString()).isEqualTo("sound");
        assertThat(verified.get("checksums").asBoolean()).isTrue();
        assertThat(Instant.parse(verified.get("at").asText()).toEpochMilli()).isGreaterThanOrEqualTo(before - 1000);
        assertThat(json.readTree(rest.getForEntity("/actuator/health", String.class).getBody()).get("status").asText()).isEqualTo("UP");

        // bit rot on the backup disk: the re-check finds it, the list, health, metric and audit say so
        String rotten = org.holdfast.server.store.BackupFiles.rot(BACKUPS);
        ResponseEntity<String> r = rest.exchange("/api/v1/catalog/backups/3/verify", HttpMethod.POST, HttpEntity.EMPTY, String.class);
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(202);
        JsonNode check = JobPolling.awaitEnd(p -> rest.getForEntity(p, String.class).getBody(), r.getHeaders().getLocation().getPath());
        assertThat(check.get("kind").asText()).isEqualTo("catalog-backup-verify");
        assertThat(check.get("state").asText()).as(check.toString()).isEqualTo("failed");
        assertThat(check.get("error").asText()).contains("catalog backup 3").contains("is damaged").contains(rotten);
        assertThat(check.get("progress").get("bytesDone").asLong()).isPositive();
        JsonNode after = json.readTree(rest.getForEntity("/api/v1/catalog/backups", String.class).getBody());
        assertThat(after.get(0).get("verified").get("result").asText()).isEqualTo("damaged");
        assertThat(after.get(0).get("verified").get("problems").get(0).asText()).contains(rotten);
        ResponseEntity<String> health = rest.getForEntity("/actuator/health", String.class);
        assertThat(health.getStatusCode().value()).isEqualTo(200);
        assertThat(json.readTree(health.getBody()).get("status").asText()).as("component catalogBackup").isEqualTo("DEGRADED");
        String prom = rest.getForEntity("/actuator/prometheus", String.class).getBody();
        assertThat(prom).containsPattern("(?m)^holdfast_catalog_backup_damaged(\\{[^}]*\\})? 1\\.0$")
                .containsPattern("(?m)^holdfast_catalog_backup_failures_total(\\{[^}]*\\})? 1\\.0$");
        JsonNode requested = json.readTree(rest.getForEntity("/api/v1/audit?action=catalog.backup.verify", String.class).getBody());
        assertThat(requested.get("entries")).hasSize(1);
        JsonNode outcome = json.readTree(rest.getForEntity("/api/v1/audit?action=catalog.backup.verified", String.class).getBody());
        assertThat(outcome.get("entries").get(0).get("result").asText()).isEqualTo("failed");
        assertThat(outcome.get("entries").get(0).get("target").asText()).isEqualTo("catalog-backup:3");

        for (String bad : new String[] {"99", "abc", "0", "-1", "99999999999"}) {
            ResponseEntity<String> unknown = rest.exchange("/api/v1/catalog/backups/" + bad + "/verify", HttpMethod.POST,
                    HttpEntity.EMPTY, String.class);
            assertThat(unknown.getStatusCode().value()).as(bad + ": " + unknown.getBody()).isEqualTo(404);
            assertThat(json.readTree(unknown.getBody()).get("type").asText()).isEqualTo("urn:holdfast:problem:unknown-catalog-backup");
        }
    }

    @Test
    void backups_byAnOperator_forbidden() {
        TestTokens.authorize(rest, TestTokens.issue(context, Role.OPERATOR));
        ResponseEntity<String> r = rest.exchange("/api/v1/catalog/backups", HttpMethod.POST, HttpEntity.EMPTY, String.class);
        assertThat(r.getStatusCode().value()).isEqualTo(403);
    }
}
