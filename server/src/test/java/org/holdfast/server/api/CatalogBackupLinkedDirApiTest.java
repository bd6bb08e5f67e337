package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A server whose catalog backup directory holds a symbolic link in place of a directory the backups
 * delete in starts all the same: the health check and a metric name the link, a backup job fails
 * saying what to remove, nothing outside is touched, and once the link is gone a backup runs.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability
class CatalogBackupLinkedDirApiTest {
    private static final Path DATA;
    private static final Path BACKUPS;
    private static final Path OUTSIDE;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-catalog-backup-linked-test");
            BACKUPS = Files.createTempDirectory("holdfast-catalog-backups-linked");
            OUTSIDE = Files.createTempDirectory("holdfast-catalog-backups-outside");
            Files.writeString(OUTSIDE.resolve("precious.sst"), "not a catalog backup file");
            Files.createSymbolicLink(BACKUPS.resolve("shared_checksum"), OUTSIDE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry r) {
        PlainServerProperties.add(r, DATA);
        r.add("holdfast.catalog.backup.directory", BACKUPS::toString);
    }

    @Autowired
    TestRestTemplate rest;

    @Autowired
    ApplicationContext context;

    private final ObjectMapper json = new ObjectMapper();

    private JsonNode backup() {
        ResponseEntity<String> r = rest.exchange("/api/v1/catalog/backups", HttpMethod.POST, HttpEntity.EMPTY, String.class);
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(202);
        return JobPolling.awaitEnd(p -> rest.getForEntity(p, String.class).getBody(), r.getHeaders().getLocation().getPath());
    }

    @Test
    void linkedSharedDir_serverStarts_healthNamesIt_backupFailsSayingWhatToDo_thenRunsOnceItIsGone() throws Exception {
        TestTokens.authorize(rest, TestTokens.issue(context, Role.ADMIN));
        assertThat(json.readTree(rest.getForEntity("/actuator/health", String.class).getBody()).get("status").asText())
                .isEqualTo("DEGRADED");
        Health component = context.getBean("catalogBackupHealthIndicator", HealthIndicator.class).health();
        assertThat(component.getDetails().get("reason").toString()).contains("shared_checksum is a symbolic link")
                .contains("Remove the link");
        assertThat(component.getDetails().get("action").toString()).as("the component's action alone gets the operator out")
                .contains("remove the link", "move that directory back", "POST /api/v1/catalog/backups", "no restart");
        assertThat(rest.getForEntity("/actuator/prometheus", String.class).getBody())
                .containsPattern("(?m)^holdfast_catalog_backup_blocked(\\{[^}]*\\})? 1\\.0$");

        JsonNode failed = backup();
        assertThat(failed.get("state").asText()).as(failed.toString()).isEqualTo("failed");
        assertThat(failed.get("error").asText()).contains("shared_checksum is a symbolic link").contains("Remove the link");
        assertThat(Files.readString(OUTSIDE.resolve("precious.sst"))).isEqualTo("not a catalog backup file");
        try (var s = Files.list(OUTSIDE)) {
            assertThat(s.toList()).as("nothing written through the link").hasSize(1);
        }

        Files.delete(BACKUPS.resolve("shared_checksum"));
        JsonNode ok = backup();
        assertThat(ok.get("state").asText()).as(ok.toString()).isEqualTo("succeeded");
        assertThat(ok.get("result").get("backupId").asInt()).isEqualTo(1);
        assertThat(context.getBean("catalogBackupHealthIndicator", HealthIndicator.class).health().getStatus().getCode())
                .isEqualTo("UP");
        assertThat(rest.getForEntity("/actuator/prometheus", String.class).getBody())
                .containsPattern("(?m)^holdfast_catalog_backup_blocked(\\{[^}]*\\})? 0\\.0$");
    }
}
