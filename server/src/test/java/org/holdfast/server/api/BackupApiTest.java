package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** Running backups ({@code /api/v1/backups}) and the recent statistics history, against a real backup on a real server. */
class BackupApiTest {
    private static final int BS = 4096;

    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path data;

    private static ConfigurableApplicationContext start(Path dir) {
        return new SpringApplicationBuilder(HoldfastServer.class).run("--holdfast.data-dir=" + dir, "--holdfast.tls.enabled=false",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0", "--server.port=0",
                "--holdfast.stats.sample-interval=1s");
    }

    private HttpResponse<String> call(ConfigurableApplicationContext ctx, String path, String token) throws Exception {
        return RestCalls.call(http, Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port")), "GET", path, null, token);
    }

    private JsonNode get(ConfigurableApplicationContext ctx, String path, String token) throws Exception {
        HttpResponse<String> r = call(ctx, path, token);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    @Test
    void backups_oneInProgress_listedWithItsProgressUntilItCommits() throws Exception {
        try (ConfigurableApplicationContext ctx = start(data)) {
            String viewer = TestTokens.issue(ctx, Role.VIEWER);
            String operator = TestTokens.issue(ctx, Role.OPERATOR);
            assertThat(get(ctx, "/api/v1/backups", viewer)).isEmpty();
            byte[] img = new byte[16 * BS];
            new Random(7).nextBytes(img);
            try (AgentDriver d = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                long before = System.currentTimeMillis();
                d.begin("run-a", BS, img.length, 0);
                assertThat(d.sendEntriesAndBlocks(img, BS, 0, 6, false, null)).isEqualTo(6);
                // the BLOCKS frame is handled after its NEED went out: wait for the server to count it
                JsonNode b = awaitBlocks(ctx, viewer, 6);
                assertThat(b.get("volume").asText()).isEqualTo("run-a");
                assertThat(b.get("volumeBytes").asLong()).isEqualTo(img.length);
                assertThat(b.get("blockSize").asInt()).isEqualTo(BS);
                assertThat(b.get("positionBytes").asLong()).isEqualTo(6L * BS);
                assertThat(b.get("entriesReceived").asLong()).isEqualTo(6);
                assertThat(b.get("bytesReceived").asLong()).isEqualTo(6L * BS); // raw uploads: payload as sent
                assertThat(Instant.parse(b.get("startedAt").asText()).toEpochMilli()).isBetween(before - 1000, System.currentTimeMillis());
                assertThat(b.get("bytesPerSecond").asDouble()).isPositive();
                assertThat(b.get("etaSeconds").isNumber()).as("the position moved: an ETA").isTrue();
                assertThat(b.get("principal").isNull()).as("a viewer does not see who sends a backup").isTrue();
                assertThat(b.get("agent").isNull()).isTrue();
                JsonNode forOperator = get(ctx, "/api/v1/backups", operator).get(0);
                assertThat(forOperator.get("principal").asText()).startsWith("token:").contains("test-agent");
                assertThat(forOperator.get("agent").asText()).isEqualTo("test-agent");

                d.sendEntriesAndBlocks(img, BS, 6, 16, false, null);
                d.send(new Commit(img.length));
                assertThat(d.expect(Committed.class).sequence()).isEqualTo(1);
            }
            assertThat(get(ctx, "/api/v1/backups", viewer)).as("a committed backup is no longer running").isEmpty();
            assertThat(call(ctx, "/api/v1/backups", TestTokens.issue(ctx, Role.AGENT)).statusCode())
                    .as("agent tokens do not read the list").isEqualTo(403);
        }
    }

    @Test
    void history_afterABackup_samplesShowTheLogicalBytesAndTheIngest() throws Exception {
        try (ConfigurableApplicationContext ctx = start(data)) {
            String viewer = TestTokens.issue(ctx, Role.VIEWER);
            byte[] img = new byte[8 * BS];
            new Random(8).nextBytes(img);
            try (AgentDriver d = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                d.backup("hist-a", img, BS, false);
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            JsonNode last = null;
            while (System.nanoTime() < deadline) {
                JsonNode h = get(ctx, "/api/v1/stats/history", viewer);
                last = h.isEmpty() ? null : h.get(h.size() - 1);
                if (last != null && last.get("logicalBytes").asLong() == img.length) {
                    break;
                }
                Thread.sleep(200);
            }
            assertThat(last).as("a sample taken after the backup").isNotNull();
            assertThat(last.get("logicalBytes").asLong()).isEqualTo(img.length);
            assertThat(last.get("bytesIngested").asLong()).isEqualTo(img.length);
            assertThat(last.get("dataLogBytes").asLong()).isGreaterThanOrEqualTo(img.length);
            String at = last.get("at").asText();
            JsonNode since = get(ctx, "/api/v1/stats/history?since=" + at, viewer);
            assertThat(since).isNotEmpty();
            assertThat(Instant.parse(since.get(0).get("at").asText())).isAfterOrEqualTo(Instant.parse(at));
            HttpResponse<String> bad = call(ctx, "/api/v1/stats/history?since=yesterday", viewer);
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("invalid-request").contains("ISO-8601");
        }
    }

    private JsonNode awaitBlocks(ConfigurableApplicationContext ctx, String token, long blocks) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        JsonNode list = null;
        while (System.nanoTime() < deadline) {
            list = get(ctx, "/api/v1/backups", token);
            if (list.size() == 1 && list.get(0).get("blocksReceived").asLong() == blocks) {
                return list.get(0);
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the running backup never showed " + blocks + " blocks received: " + list);
    }
}
