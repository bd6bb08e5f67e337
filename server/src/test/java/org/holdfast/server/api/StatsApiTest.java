package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.system.DiskSpaceHealthIndicator;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Statistics, the daily series, agents and metrics over REST, against real backups on a real
 * server (a Spring context per scenario, restarted on the same data directory where it matters).
 */
class StatsApiTest {
    private static final int BS = 4096;
    private static final String RECORD = "\\d+(\\.\\d+)?(E[+-]?\\d+)?";

    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path data;

    private static ConfigurableApplicationContext start(Path dir, String... extra) {
        Map<String, String> p = new java.util.LinkedHashMap<>();
        p.put("holdfast.data-dir", dir.toString());
        p.put("holdfast.tls.enabled", "false");
        p.put("holdfast.ingest.host", "127.0.0.1");
        p.put("holdfast.ingest.port", "0");
        p.put("holdfast.store.min-free-space", "0");
        p.put("server.port", "0");
        p.put("holdfast.stats.survey-interval", "1ms"); // every report walks the store: figures are exact
        for (int i = 0; i < extra.length; i += 2) {
            p.put(extra[i], extra[i + 1]);
        }
        // command-line arguments: they win over application.yml (default properties would not)
        return new SpringApplicationBuilder(HoldfastServer.class)
                .run(p.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new));
    }

    private static int port(ConfigurableApplicationContext ctx) {
        return Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
    }

    private JsonNode get(ConfigurableApplicationContext ctx, String path, String token) throws Exception {
        HttpResponse<String> r = RestCalls.call(http, port(ctx), "GET", path, null, token);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    private static byte[] random(int blocks, long seed) {
        byte[] img = new byte[blocks * BS];
        new Random(seed).nextBytes(img);
        return img;
    }

    @Test
    void stats_twoVolumesSharingBlocks_figuresMatchTheSnapshots() throws Exception {
        try (ConfigurableApplicationContext ctx = start(data)) {
            int ingest = ctx.getBean(IngestServer.class).port();
            byte[] img = random(8, 1);
            Committed a;
            Committed b;
            try (AgentDriver d = new AgentDriver(ingest, TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                a = d.backup("stats-a", img, BS, false);
                b = d.backup("stats-b", img, BS, false);
            }
            assertThat(a.newBlocks()).isEqualTo(8);
            assertThat(b.newBlocks()).as("the second volume holds the same blocks").isZero();

            JsonNode s = get(ctx, "/api/v1/stats", TestTokens.issue(ctx, Role.VIEWER));
            assertThat(s.get("logical").get("snapshots").asLong()).isEqualTo(2);
            assertThat(s.get("logical").get("logicalBytes").asLong()).isEqualTo(2L * img.length);
            assertThat(s.get("logical").get("newestLogicalBytes").asLong()).isEqualTo(2L * img.length);
            assertThat(s.get("stored").get("blocks").asLong()).isEqualTo(8);
            assertThat(s.get("stored").get("payloadBytes").asLong()).isEqualTo(a.storedBytes() + b.storedBytes())
                    .isEqualTo(img.length); // uncompressed uploads are stored as sent
            assertThat(s.get("stored").get("recordBytes").asLong()).isEqualTo(img.length + 8L * 32);
            assertThat(s.get("stored").get("dataLogBytes").asLong()).isGreaterThanOrEqualTo(img.length + 8L * 32);
            assertThat(s.get("compressionRatio").asDouble()).isEqualTo(1.0);
            assertThat(s.get("dedupRatio").asDouble()).isEqualTo(2.0);
            assertThat(s.get("reductionRatio").asDouble()).isEqualTo(2.0);
            assertThat(s.get("reclaimable").get("nowBytes").asLong()).as("nothing deleted or overwritten").isZero();
            assertThat(s.get("transfers").get("bytesIngested").asLong()).isEqualTo(img.length); // the dedup'd volume sent nothing
            assertThat(s.get("transfers").get("ingestBytesPerSecond").asDouble()).isPositive();
            assertThat(s.get("objectStore").isNull()).as("backend local: no object-store figures").isTrue();
            JsonNode vols = s.get("volumes");
            assertThat(vols).hasSize(2);
            assertThat(vols.get(0).get("name").asText()).isEqualTo("stats-a");
            assertThat(vols.get(0).get("storedBytesAdded").asLong()).isEqualTo(img.length);
            assertThat(vols.get(1).get("storedBytesAdded").asLong()).isZero();
            assertThat(vols.get(1).get("logicalBytes").asLong()).isEqualTo(img.length);
            assertThat(Instant.parse(vols.get(1).get("lastBackupAt").asText()).toEpochMilli()).isEqualTo(b.createdAtMillis());
            JsonNode cap = s.get("capacity");
            assertThat(Path.of(cap.get("path").asText())).isEqualTo(data.toAbsolutePath().normalize());
            assertThat(cap.get("totalBytes").asLong()).isEqualTo(Files.getFileStore(data).getTotalSpace());
            assertThat(cap.get("usableBytes").asLong()).isPositive().isLessThanOrEqualTo(cap.get("totalBytes").asLong());

            // a restore counts as restored bytes
            try (AgentDriver d = new AgentDriver(ingest, TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                assertThat(d.restore("stats-b", 1).image()).isEqualTo(img);
            }
            JsonNode t = get(ctx, "/api/v1/stats", TestTokens.issue(ctx, Role.VIEWER)).get("transfers");
            assertThat(t.get("bytesRestored").asLong()).isEqualTo(img.length);
        }
    }

    @Test
    void stats_overwrittenBlocks_reclaimableOnTheDayTheirSnapshotExpires() throws Exception {
        try (ConfigurableApplicationContext ctx = start(data, "holdfast.gc.default-retention", "30d")) {
            byte[] img = random(8, 2);
            Committed first;
            try (AgentDriver d = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                first = d.backup("stats-r", img, BS, false);
                for (int i = 0; i < 3 * BS; i += BS) {
                    img[i] ^= 1; // three blocks change: their old versions are kept only by snapshot 1
                }
                d.backup("stats-r", img, BS, false);
            }
            ctx.getBean(GcService.class).pipeline().commitAll(); // the survey reads the GMA as applied
            JsonNode r = get(ctx, "/api/v1/stats", TestTokens.issue(ctx, Role.VIEWER)).get("reclaimable");
            LocalDate day = LocalDate.ofInstant(Instant.ofEpochMilli(first.createdAtMillis()).plus(30, ChronoUnit.DAYS), ZoneOffset.UTC);
            assertThat(r.get("byDate")).as(r.toString()).hasSize(1);
            assertThat(r.get("byDate").get(0).get("date").asText()).isEqualTo(day.toString());
            assertThat(r.get("byDate").get(0).get("bytes").asLong()).isEqualTo(3L * (BS + 32));
            assertThat(r.get("byDate").get(0).get("cumulativeBytes").asLong()).isEqualTo(3L * (BS + 32) + r.get("nowBytes").asLong());
            assertThat(r.get("expiredBytes").asLong()).isZero();
        }
    }

    @Test
    void agents_afterBackups_listTokenAddressVersionAndResults() throws Exception {
        try (ConfigurableApplicationContext ctx = start(data)) {
            int ingest = ctx.getBean(IngestServer.class).port();
            String agentToken = TestTokens.issue(ctx, Role.AGENT);
            byte[] img = random(4, 4);
            try (AgentDriver d = new AgentDriver(ingest, agentToken)) {
                d.send(Hello.of("holdfast-agent/9.8.7@db-host", agentToken));
                d.expect(HelloOk.class);
                d.backup("agent-ok", img, BS, false);
            }
            try (AgentDriver d = new AgentDriver(ingest, agentToken)) {
                d.hello(); // an agent that sends no version
                d.begin("agent-cut", BS, img.length, 0);
            } // closed before the commit

            assertThat(RestCalls.call(http, port(ctx), "GET", "/api/v1/agents", null, TestTokens.issue(ctx, Role.VIEWER))
                    .statusCode()).as("addresses and token names are for operators").isEqualTo(403);
            JsonNode agents = null;
            for (int i = 0; i < 100; i++) { // the connection's end is recorded on its lane, just after the socket closes
                agents = get(ctx, "/api/v1/agents", TestTokens.issue(ctx, Role.OPERATOR));
                if (agents.size() == 1 && agents.get(0).get("volumes").size() == 2) {
                    break;
                }
                Thread.sleep(50);
            }
            assertThat(agents).as(String.valueOf(agents)).hasSize(1);
            JsonNode a = agents.get(0);
            assertThat(a.get("tokenName").asText()).isEqualTo("test-agent");
            assertThat(agentToken).contains(a.get("tokenId").asText());
            assertThat(a.get("remoteAddress").asText()).startsWith("127.0.0.1:");
            assertThat(a.get("connections").asLong()).isEqualTo(2);
            assertThat(a.get("agentName").asText()).isEqualTo("test-agent");
            assertThat(a.get("agentVersion").isNull()).as("the last connection sent no version").isTrue();
            assertThat(Instant.parse(a.get("firstContact").asText())).isBeforeOrEqualTo(Instant.parse(a.get("lastContact").asText()));
            JsonNode cut = a.get("volumes").get(0);
            assertThat(cut.get("volume").asText()).isEqualTo("agent-cut");
            assertThat(cut.get("result").asText()).isEqualTo("error");
            assertThat(cut.get("message").asText()).contains("connection closed before the commit");
            JsonNode ok = a.get("volumes").get(1);
            assertThat(ok.get("volume").asText()).isEqualTo("agent-ok");
            assertThat(ok.get("result").asText()).isEqualTo("success");
            assertThat(ok.get("bytes").asLong()).isEqualTo(img.length);
        }
        // the record survives a restart, and a versioned HELLO is parsed
        try (ConfigurableApplicationContext ctx = start(data)) {
            String token = TestTokens.issue(ctx, Role.AGENT);
            try (AgentDriver d = new AgentDriver(ctx.getBean(IngestServer.class).port(), token)) {
                d.send(Hello.of("holdfast-agent/9.8.7@db-host", token));
                d.expect(HelloOk.class);
            }
            JsonNode agents = get(ctx, "/api/v1/agents", TestTokens.issue(ctx, Role.ADMIN));
            assertThat(agents).hasSize(2);
            assertThat(agents.get(0).get("agentVersion").asText()).isEqualTo("9.8.7");
            assertThat(agents.get(1).get("volumes")).hasSize(2);
        }
    }

    @Test
    void daily_survivesRestart_andCountsOnFromTheStoredDay() throws Exception {
        String today = LocalDate.now(ZoneOffset.UTC).toString();
        byte[] img = random(4, 5);
        long ingestedBefore;
        try (ConfigurableApplicationContext ctx = start(data)) {
            try (AgentDriver d = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                d.backup("daily", img, BS, false);
            }
            JsonNode day = awaitDay(ctx, today, n -> n.get("bytesIngested").asLong() == img.length);
            assertThat(day.get("snapshots").asLong()).isEqualTo(1);
            assertThat(day.get("logicalBytes").asLong()).isEqualTo(img.length);
            assertThat(day.get("storedBytes").asLong()).isEqualTo(img.length);
            ingestedBefore = day.get("bytesIngested").asLong();
        }
        try (ConfigurableApplicationContext ctx = start(data)) {
            JsonNode day = get(ctx, "/api/v1/stats/daily?from=" + today + "&to=" + today, TestTokens.issue(ctx, Role.VIEWER)).get(0);
            assertThat(day.get("bytesIngested").asLong()).as("what the day counted before the restart").isEqualTo(ingestedBefore);
            img[0] ^= 1;
            try (AgentDriver d = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                d.backup("daily", img, BS, false);
            }
            day = awaitDay(ctx, today, n -> n.get("snapshots").asLong() == 2);
            assertThat(day.get("bytesIngested").asLong()).as("counting goes on from the stored day")
                    .isEqualTo(ingestedBefore + BS);
            JsonNode all = get(ctx, "/api/v1/stats/daily", TestTokens.issue(ctx, Role.VIEWER));
            assertThat(all).as("one record per day, however often it is written").hasSize(1);
        }
    }

    private JsonNode awaitDay(ConfigurableApplicationContext ctx, String today, java.util.function.Predicate<JsonNode> done)
            throws Exception {
        JsonNode last = null;
        for (int i = 0; i < 100; i++) { // the refresh runs every second
            JsonNode days = get(ctx, "/api/v1/stats/daily?from=" + today, TestTokens.issue(ctx, Role.VIEWER));
            if (days.size() == 1) {
                last = days.get(0);
                assertThat(last.get("date").asText()).isEqualTo(today);
                if (done.test(last)) {
                    return last;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("today's record never got there: " + last);
    }

    @Test
    void stats_badQueriesAndRoles_problemDetailsAndNothingWritten() throws Exception {
        try (ConfigurableApplicationContext ctx = start(data)) {
            String viewer = TestTokens.issue(ctx, Role.VIEWER);
            for (String q : new String[] {"from=yesterday", "to=2026-13-01", "from=2026-02-01&to=2026-01-01",
                    "from=2020-01-01&to=2026-01-01", "from=2026-01-01&to="}) {
                HttpResponse<String> r = RestCalls.call(http, port(ctx), "GET", "/api/v1/stats/daily?" + q, null, viewer);
                assertThat(r.statusCode()).as(q + ": " + r.body()).isEqualTo(400);
                JsonNode p = json.readTree(r.body());
                assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");
                assertThat(p.get("detail").asText()).isNotBlank();
            }
            assertThat(RestCalls.call(http, port(ctx), "GET", "/api/v1/stats", null, null).statusCode()).isEqualTo(401);
            assertThat(RestCalls.call(http, port(ctx), "GET", "/api/v1/stats", null, TestTokens.issue(ctx, Role.AGENT))
                    .statusCode()).isEqualTo(403);
            assertThat(RestCalls.call(http, port(ctx), "POST", "/api/v1/stats", "{}", TestTokens.issue(ctx, Role.ADMIN))
                    .statusCode()).isEqualTo(405);
        }
    }

    @Test
    void diskSpace_healthAndMetric_measureTheDataDirectory() throws Exception {
        Path dir = data.resolve("elsewhere");
        try (ConfigurableApplicationContext ctx = start(dir)) {
            Path expected = dir.toAbsolutePath().normalize();
            DiskSpaceHealthIndicator health = ctx.getBean(DiskSpaceHealthIndicator.class);
            assertThat(health.health().getDetails().get("path")).isEqualTo(expected.toFile().getAbsolutePath());
            MeterRegistry registry = ctx.getBean(MeterRegistry.class);
            assertThat(registry.find("disk.free").meters()).isNotEmpty().allSatisfy(m ->
                    assertThat(m.getId().getTag("path")).isEqualTo(expected.toFile().getAbsolutePath()));
            assertThat(registry.find("disk.total").meters()).extracting(Meter::getId)
                    .allSatisfy(id -> assertThat(id.getTag("path")).isNotEqualTo(Path.of("").toAbsolutePath().toString()));
        }
    }

    @Test
    void prometheus_countersHaveTotalEveryHoldfastMetricHasHelpAndGaugesMatchTheReport() throws Exception {
        try (ConfigurableApplicationContext ctx = start(data)) {
            byte[] img = random(8, 6); // 8 blocks: Sungem samples segments of at least 8 (T_summary)
            try (AgentDriver d = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT))) {
                d.hello();
                d.backup("metrics-a", img, BS, false);
                d.backup("metrics-b", img, BS, false);
            }
            String viewer = TestTokens.issue(ctx, Role.VIEWER);
            JsonNode s = get(ctx, "/api/v1/stats", viewer); // makes the report the gauges read
            HttpResponse<String> r = RestCalls.call(http, port(ctx), "GET", "/actuator/prometheus", null, viewer);
            assertThat(r.statusCode()).isEqualTo(200);
            String text = r.body();

            Matcher types = Pattern.compile("(?m)^# TYPE (holdfast_\\S+) (\\S+)$").matcher(text);
            int families = 0;
            while (types.find()) {
                families++;
                String name = types.group(1);
                assertThat(text).as("HELP of " + name).containsPattern("(?m)^# HELP " + Pattern.quote(name) + " \\S.*$");
                if (types.group(2).equals("counter")) {
                    assertThat(name).endsWith("_total");
                    assertThat(text).containsPattern("(?m)^" + Pattern.quote(name) + "(\\{.*\\})? ");
                }
            }
            assertThat(families).isGreaterThan(20);
            for (String counter : new String[] {"holdfast_ingest_commits", "holdfast_ingest_sessions", "holdfast_store_blocks_appended",
                    "holdfast_transfer_ingested_bytes", "holdfast_index_lookups", "holdfast_gc_updates_logged"}) {
                assertThat(text).containsPattern("(?m)^# TYPE " + counter + "_total counter$");
            }
            assertThat(value(text, "holdfast_ingest_commits_total")).isEqualTo(2);
            assertThat(value(text, "holdfast_transfer_ingested_bytes_total")).isEqualTo(img.length);
            assertThat(value(text, "holdfast_stored_bytes")).isEqualTo(s.get("stored").get("payloadBytes").asDouble())
                    .isEqualTo(img.length);
            assertThat(value(text, "holdfast_logical_bytes")).isEqualTo(2.0 * img.length);
            assertThat(value(text, "holdfast_dedup_ratio")).isEqualTo(2.0);
            assertThat(value(text, "holdfast_reclaimable_bytes")).isEqualTo(s.get("reclaimable").get("nowBytes").asDouble());
            assertThat(text).containsPattern("(?m)^# TYPE holdfast_stored_bytes gauge$");
        }
    }

    private static double value(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (" + RECORD + ")$").matcher(text);
        assertThat(m.find()).as(name + " in the scrape").isTrue();
        return Double.parseDouble(m.group(2));
    }
}
