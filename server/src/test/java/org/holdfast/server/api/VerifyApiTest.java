package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Verify over REST on the wired appliance: a pass as a job finds rotted blocks, the volume and
 * snapshot are flagged, health degrades, metrics count them; a backup of the healthy source clears
 * all of it. Bad requests start nothing.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
class VerifyApiTest {
    private static final Path DATA;
    private static final int BS = 4096;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-verify-api-test");
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
        r.add("holdfast.verify.window", () -> "0");
        r.add("holdfast.verify.schedule", () -> "0");
    }

    @Autowired
    TestRestTemplate rest;

    @Autowired
    ApplicationContext context;

    @Autowired
    IngestServer ingest;

    @Autowired
    DataStore store;

    private final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void authenticate() {
        TestTokens.authorize(rest, TestTokens.issue(context, Role.ADMIN));
    }

    private JsonNode get(String path) throws IOException {
        ResponseEntity<String> r = rest.getForEntity(path, String.class);
        assertThat(r.getStatusCode().value()).as(path + ": " + r.getBody()).isEqualTo(200);
        return json.readTree(r.getBody());
    }

    private ResponseEntity<String> post(String path, String body) {
        HttpHeaders h = new HttpHeaders();
        h.setContentType(MediaType.APPLICATION_JSON);
        return rest.exchange(path, HttpMethod.POST, new HttpEntity<>(body, h), String.class);
    }

    private JsonNode runVerify(String body) {
        ResponseEntity<String> r = post("/api/v1/verify", body);
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(202);
        assertThat(r.getHeaders().getLocation()).isNotNull();
        return JobPolling.awaitResult(p -> rest.getForEntity(p, String.class).getBody(), r.getHeaders().getLocation().getPath());
    }

    private static byte[] image(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static double metric(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$").matcher(text);
        assertThat(m.find()).as("metric " + name).isTrue();
        return Double.parseDouble(m.group(2));
    }

    @Test
    void verify_rottedBlocks_flaggedInApiHealthMetrics_untilABackupRepairsThem() throws Exception {
        byte[] healthy = image(11, 40);
        byte[] rotting = image(12, 40);
        String agentToken = TestTokens.issue(context, Role.AGENT);
        long firstRotPbn;
        try (AgentDriver a = new AgentDriver(ingest.port(), agentToken)) {
            a.hello();
            a.backup("va-ok", healthy, BS, true);
            firstRotPbn = store.nextPbn();
            a.backup("va-rot", rotting, BS, true);
        }
        // rot three of va-rot's blocks on disk
        List<long[]> rot = new ArrayList<>();
        long from = firstRotPbn;
        store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
            if (pbn >= from && rot.size() < 3 && pbn % 5 == 0) {
                rot.add(new long[] {pbn, logId, offset, len});
            }
            return true;
        });
        assertThat(rot).hasSize(3);
        for (long[] r : rot) {
            try (FileChannel ch = FileChannel.open(store.dir().resolve(String.format("log-%08x.hfl", (int) r[1])), StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {0x13, 0x37}), r[2] + FormatVersions.RECORD_HEADER_BYTES + 5);
            }
        }

        JsonNode result = runVerify("{}");
        assertThat(result.get("badBlocks").asLong()).as(result.toString()).isEqualTo(3);
        assertThat(result.get("damagedSnapshots").toString()).contains("va-rot@1").doesNotContain("va-ok");

        JsonNode vol = get("/api/v1/volumes/va-rot");
        assertThat(vol.get("damaged").asBoolean()).isTrue();
        assertThat(vol.get("damagedSnapshots").get(0).get("snapshot").asText()).isEqualTo("va-rot@1");
        assertThat(vol.get("damagedSnapshots").get(0).get("damagedCount").asLong()).isEqualTo(3);
        assertThat(get("/api/v1/volumes/va-ok").get("damaged").asBoolean()).isFalse();

        JsonNode snap = get("/api/v1/volumes/va-rot/snapshots/va-rot@1").get("verification");
        assertThat(snap.get("status").asText()).isEqualTo("damaged");
        assertThat(snap.get("lastVerified").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        assertThat(snap.get("damagedBlocks")).hasSize(3);
        assertThat(snap.get("damagedBlocks").get(0).get("file").asText()).contains("log-");
        assertThat(snap.get("damagedBlocks").get(0).has("lbn")).isTrue();
        assertThat(get("/api/v1/volumes/va-ok/snapshots/1").get("verification").get("status").asText()).isEqualTo("ok");

        JsonNode status = get("/api/v1/verify");
        assertThat(status.get("badBlockCount").asInt()).isEqualTo(3);
        assertThat(status.get("damagedVolumes").toString()).contains("va-rot").doesNotContain("va-ok");
        assertThat(status.get("settings").get("window").asText()).isEqualTo("0");
        assertThat(status.get("settings").get("schedule").isNull()).isTrue();

        ResponseEntity<String> health = rest.getForEntity("/actuator/health", String.class);
        assertThat(health.getStatusCode().value()).isEqualTo(200);
        assertThat(json.readTree(health.getBody()).get("status").asText()).isEqualTo("DEGRADED");

        String prom = rest.getForEntity("/actuator/prometheus", String.class).getBody();
        assertThat(metric(prom, "holdfast_verify_bad_blocks")).isEqualTo(3.0);
        assertThat(metric(prom, "holdfast_verify_damaged_volumes")).isEqualTo(1.0);
        assertThat(metric(prom, "holdfast_verify_runs_total")).isGreaterThanOrEqualTo(1.0);
        double repairedBefore = metric(prom, "holdfast_verify_repaired_blocks_total"); // other tests of this context repair too

        // the healthy source, backed up again, repairs the blocks in place
        try (AgentDriver a = new AgentDriver(ingest.port(), agentToken)) {
            a.hello();
            a.backup("va-rot", rotting, BS, true);
            AgentDriver.Restored r = a.restore("va-rot", 1);
            assertThat(r.image()).as("va-rot@1 healed").isEqualTo(rotting);
        }
        assertThat(get("/api/v1/volumes/va-rot").get("damaged").asBoolean()).isFalse();
        JsonNode healed = get("/api/v1/volumes/va-rot/snapshots/1").get("verification");
        assertThat(healed.get("status").asText()).isEqualTo("ok");
        assertThat(healed.get("repairedBlocks").asLong()).isEqualTo(3);
        assertThat(json.readTree(rest.getForEntity("/actuator/health", String.class).getBody()).get("status").asText()).isEqualTo("UP");
        prom = rest.getForEntity("/actuator/prometheus", String.class).getBody();
        assertThat(metric(prom, "holdfast_verify_bad_blocks")).isZero();
        assertThat(metric(prom, "holdfast_verify_repaired_blocks_total")).isEqualTo(repairedBefore + 3.0);
        JsonNode clean = runVerify("{\"volume\": \"va-rot\", \"snapshot\": \"va-rot@1\", \"full\": true}");
        assertThat(clean.get("badBlocks").asLong()).isZero();
        assertThat(clean.get("blocksRead").asLong()).as("a full pass reads every block").isEqualTo(40);
        assertThat(clean.get("snapshots").asLong()).isEqualTo(1);
    }

    @Test
    void fsck_findsRot_queuesAPassThatFlagsTheVolume_andTheNextIncrementalIsFullAndRepairs() throws Exception {
        byte[] img = image(31, 30);
        String agentToken = TestTokens.issue(context, Role.AGENT);
        long first;
        try (AgentDriver a = new AgentDriver(ingest.port(), agentToken)) {
            a.hello();
            first = store.nextPbn();
            a.backup("va-fsck", img, BS, true);
        }
        List<long[]> rot = new ArrayList<>();
        long from = first;
        store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
            if (pbn >= from && rot.isEmpty()) {
                rot.add(new long[] {pbn, logId, offset});
            }
            return true;
        });
        try (FileChannel ch = FileChannel.open(store.dir().resolve(String.format("log-%08x.hfl", (int) rot.get(0)[1])), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {0x13, 0x37}), rot.get(0)[2] + FormatVersions.RECORD_HEADER_BYTES + 5);
        }
        ResponseEntity<String> started = rest.postForEntity("/api/v1/gc/fsck", null, String.class);
        assertThat(started.getStatusCode().value()).as(started.getBody()).isEqualTo(202);
        JsonNode fsck = JobPolling.awaitResult(p -> rest.getForEntity(p, String.class).getBody(), started.getHeaders().getLocation().getPath());
        assertThat(fsck.get("corruptBlocks").get("count").asLong()).as(fsck.toString()).isEqualTo(1);

        // fsck queued a verify pass, which names the snapshot that references the block: the volume is flagged
        long deadline = System.currentTimeMillis() + 60_000;
        while (!get("/api/v1/volumes/va-fsck").get("damaged").asBoolean() && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        assertThat(get("/api/v1/volumes/va-fsck").get("damaged").asBoolean()).as("flagged after fsck, without an operator's verify").isTrue();
        assertThat(get("/api/v1/jobs?kind=verify").toString()).contains("\"submittedBy\":\"fsck\"");
        // let that pass end, so the other tests of this context see no job change state under them
        while (get("/api/v1/jobs?kind=verify").toString().matches("(?s).*\"state\":\"(running|queued)\".*")
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }

        // the agent's next incremental backup is answered full and repairs the block
        try (AgentDriver a = new AgentDriver(ingest.port(), agentToken)) {
            a.hello();
            var ready = a.begin("va-fsck", BS, img.length, 1);
            assertThat(ready.mode()).isEqualTo(org.holdfast.common.protocol.BackupMode.FULL);
            assertThat(a.sendEntriesAndBlocks(img, BS, 0, img.length / BS, true, null)).as("only the bad block is asked for").isEqualTo(1);
            a.send(new org.holdfast.common.protocol.Commit(img.length));
            a.expect(org.holdfast.common.protocol.Committed.class);
            assertThat(a.restore("va-fsck", 1).image()).as("va-fsck@1 healed").isEqualTo(img);
            assertThat(a.restore("va-fsck", 2).image()).isEqualTo(img);
        }
        assertThat(get("/api/v1/volumes/va-fsck").get("damaged").asBoolean()).isFalse();
    }

    @Test
    void verify_badRequests_problemDetailsAndNoJob() throws Exception {
        int before = get("/api/v1/jobs?kind=verify").toString().length();
        String[][] cases = {
                {"{\"volume\": 5}", "400"},
                {"{\"bogus\": 1}", "400"},
                {"[1]", "400"},
                {"{\"volume\": ", "400"},
                {"{\"snapshot\": 3}", "400"},
                {"{\"full\": \"yes\"}", "400"},
                {"{\"volume\": \"nobody\"}", "404"},
                {"{\"snapshot\": \"nobody@1\"}", "404"},
                {"{\"volume\": \"va-x\", \"snapshot\": \"other@1\"}", "400"},
        };
        for (String[] c : cases) {
            ResponseEntity<String> r = post("/api/v1/verify", c[0]);
            assertThat(r.getStatusCode().value()).as(c[0] + " -> " + r.getBody()).isEqualTo(Integer.parseInt(c[1]));
            assertThat(r.getHeaders().getContentType().toString()).contains("application/problem+json");
            assertThat(json.readTree(r.getBody()).get("type").asText()).startsWith("urn:holdfast:problem:");
        }
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, Role.AGENT))) {
            a.hello();
            a.backup("va-x", image(3, 4), BS, false);
        }
        ResponseEntity<String> r = post("/api/v1/verify", "{\"volume\": \"va-x\", \"snapshot\": 9}");
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(404);
        assertThat(get("/api/v1/jobs?kind=verify").toString().length()).as("no verify job was started").isEqualTo(before);
    }
}
