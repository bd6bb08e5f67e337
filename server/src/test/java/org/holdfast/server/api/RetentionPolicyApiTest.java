package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.engine.SteppingClock;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Named retention policies, assignment, the simulator and "kept by" over REST, on the wired
 * appliance with real backups and a clock the test moves: CRUD, bad input on every write (a problem
 * detail and nothing changed), and a policy created and assigned over REST driving the real GC
 * exactly as the simulator predicted.
 */
@SpringBootTest(classes = {HoldfastServer.class, RetentionPolicyApiTest.Clocks.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RetentionPolicyApiTest {
    private static final Path DATA;
    private static final int BS = 4096;
    /** Monday 2 March 2026, 10:00 UTC. */
    private static final Instant START = Instant.parse("2026-03-02T10:00:00Z");

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-retention-api-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The appliance's clock, moved by the tests (commits, GC runs and the simulator's default now read it). */
    @TestConfiguration(proxyBeanMethods = false)
    static class Clocks {
        @Bean
        @Primary
        SteppingClock steppingClock() {
            return new SteppingClock(START);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry r) {
        r.add("holdfast.data-dir", DATA::toString);
        r.add("holdfast.tls.enabled", () -> "false");
        r.add("holdfast.ingest.host", () -> "127.0.0.1");
        r.add("holdfast.ingest.port", () -> "0");
        r.add("holdfast.store.min-free-space", () -> "0");
        r.add("holdfast.gc.default-retention", () -> "1h"); // so that only the assigned policy keeps anything
        r.add("holdfast.gc.interval", () -> "3650d"); // no scheduled run: the test decides when GC runs
    }

    @Autowired
    TestRestTemplate rest;

    @Autowired
    ApplicationContext context;

    @Autowired
    IngestServer ingest;

    @Autowired
    SteppingClock clock;

    @Autowired
    MetadataDb db;

    private final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void authenticate() {
        TestTokens.authorize(rest, TestTokens.issue(context, Role.ADMIN));
    }

    @Test
    void clockBean_isTheSteppingOne() {
        assertThat(context.getBean(Clock.class)).isSameAs(clock);
    }

    @Test
    void policies_crud_builtInDefaultListedAndProtected() throws Exception {
        JsonNode list = body(call("GET", "/api/v1/retention/policies", null), 200);
        assertThat(list.get(0).get("name").asText()).isEqualTo("default");
        assertThat(list.get(0).get("policy").asText()).isEqualTo("1h");
        assertThat(list.get(0).get("builtIn").asBoolean()).isTrue();

        ResponseEntity<String> created = call("POST", "/api/v1/retention/policies",
                "{\"name\":\"crud-gold\",\"policy\":\"keep-last=3, daily=7,weekly=4\",\"description\":\"databases\"}");
        JsonNode c = body(created, 201);
        assertThat(created.getHeaders().getLocation()).hasToString("/api/v1/retention/policies/crud-gold");
        assertThat(c.get("policy").asText()).isEqualTo("keep-last=3,daily=7,weekly=4");
        assertThat(c.get("description").asText()).isEqualTo("databases");
        assertThat(c.get("builtIn").asBoolean()).isFalse();
        assertThat(Instant.parse(c.get("createdAt").asText())).isEqualTo(clock.instant());
        assertThat(call("GET", "/api/v1/audit", null).getBody()).as("the created policy is the audit entry's target")
                .contains("policy.create").contains("policy:crud-gold");

        JsonNode read = body(call("GET", "/api/v1/retention/policies/crud-gold", null), 200);
        assertThat(read.get("policy").asText()).isEqualTo("keep-last=3,daily=7,weekly=4");
        JsonNode updated = body(call("PUT", "/api/v1/retention/policies/crud-gold",
                "{\"policy\":\"720h\",\"description\":\"a month\"}"), 200);
        assertThat(updated.get("policy").asText()).isEqualTo("30d"); // the user's syntax, never PT720H
        assertThat(updated.get("description").asText()).isEqualTo("a month");
        assertThat(names(body(call("GET", "/api/v1/retention/policies", null), 200))).contains("default", "crud-gold");

        assertThat(call("DELETE", "/api/v1/retention/policies/crud-gold", null).getStatusCode().value()).isEqualTo(204);
        problem(call("GET", "/api/v1/retention/policies/crud-gold", null), 404, "unknown-policy");
        problem(call("DELETE", "/api/v1/retention/policies/default", null), 409, "conflict");
        problem(call("PUT", "/api/v1/retention/policies/default", "{\"policy\":\"2d\"}"), 409, "conflict");
        assertThat(body(call("GET", "/api/v1/retention/policies/default", null), 200).get("policy").asText()).isEqualTo("1h");
    }

    @Test
    void policies_badInputOnEveryWrite_problemAndNothingChanged() throws Exception {
        byte[] img = image(8, 21);
        backup("bad-vol", img);
        body(call("POST", "/api/v1/retention/policies", "{\"name\":\"bad-kept\",\"policy\":\"14d\"}"), 201);
        body(call("PUT", "/api/v1/volumes/bad-vol/retention", "{\"name\":\"bad-kept\"}"), 200);
        String policiesBefore = call("GET", "/api/v1/retention/policies", null).getBody();
        String retentionBefore = call("GET", "/api/v1/volumes/bad-vol/retention", null).getBody();

        // create
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"x1\",\"policy\":\"forever\"}"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"x1\",\"policy\":\"0d\"}"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"bad name!\",\"policy\":\"7d\"}"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"x1\"}"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"x1\",\"policy\":"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":[\"x1\"],\"policy\":\"7d\"}"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"x1\",\"policy\":\"7d\",\"description\":\""
                + "d".repeat(501) + "\"}"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"bad-kept\",\"policy\":\"7d\"}"), 409, "conflict");
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"default\",\"policy\":\"7d\"}"), 409, "conflict");
        // update
        problem(call("PUT", "/api/v1/retention/policies/bad-kept", "{\"policy\":\"daily=x\"}"), 400, "invalid-request");
        problem(call("PUT", "/api/v1/retention/policies/bad-kept", "{\"policy\":\"7d\",\"name\":\"other\"}"), 400,
                "invalid-request");
        problem(call("PUT", "/api/v1/retention/policies/bad-kept", "not json"), 400, "invalid-request");
        problem(call("PUT", "/api/v1/retention/policies/bad-kept", "{\"policy\":{\"days\":7}}"), 400, "invalid-request");
        problem(call("PUT", "/api/v1/retention/policies/nope", "{\"policy\":\"7d\"}"), 404, "unknown-policy");
        // delete: assigned, unknown
        ResponseEntity<String> assigned = call("DELETE", "/api/v1/retention/policies/bad-kept", null);
        problem(assigned, 409, "conflict");
        assertThat(json.readTree(assigned.getBody()).get("detail").asText()).contains("bad-vol");
        problem(call("DELETE", "/api/v1/retention/policies/nope", null), 404, "unknown-policy");
        // assignment
        problem(call("PUT", "/api/v1/volumes/bad-vol/retention", "{\"policy\":\"forever\"}"), 400, "invalid-request");
        problem(call("PUT", "/api/v1/volumes/bad-vol/retention", "{\"name\":\"nope\"}"), 404, "unknown-policy");
        problem(call("PUT", "/api/v1/volumes/bad-vol/retention", "{\"name\":\"bad-kept\",\"policy\":\"7d\"}"), 400,
                "invalid-request");
        problem(call("PUT", "/api/v1/volumes/bad-vol/retention", "{}"), 400, "invalid-request");
        problem(call("PUT", "/api/v1/volumes/bad-vol/retention", "{\"name\":"), 400, "invalid-request");
        problem(call("PUT", "/api/v1/volumes/bad-vol/retention", "{\"name\":{\"x\":1}}"), 400, "invalid-request");
        problem(call("PUT", "/api/v1/volumes/no-such-vol/retention", "{\"name\":\"bad-kept\"}"), 404, "unknown-volume");
        // the simulator changes nothing anyway, but its bad input is a problem too
        problem(call("POST", "/api/v1/retention/simulate", "{\"policy\":\"soon\",\"times\":[\"2026-03-01T00:00:00Z\"]}"),
                400, "invalid-request");
        problem(call("POST", "/api/v1/retention/simulate", "{\"name\":\"nope\",\"volume\":\"bad-vol\"}"), 404,
                "unknown-policy");
        problem(call("POST", "/api/v1/retention/simulate", "{\"policy\":\"7d\",\"volume\":\"no-such-vol\"}"), 404,
                "unknown-volume");
        problem(call("POST", "/api/v1/retention/simulate", "{\"policy\":\"7d\",\"volume\":\"bad-vol\",\"times\":[]}"), 400,
                "invalid-request");
        problem(call("POST", "/api/v1/retention/simulate", "{\"policy\":\"7d\",\"times\":[\"yesterday\"]}"), 400,
                "invalid-request");
        problem(call("POST", "/api/v1/retention/simulate", "{\"policy\":\"7d\",\"times\":\"2026-03-01T00:00:00Z\"}"), 400,
                "invalid-request");
        problem(call("POST", "/api/v1/retention/simulate", "{\"policy\":\"7d\",\"times\":[\"2026-03-01T00:00:00Z\"],"
                + "\"now\":\"2026-02-01T00:00:00Z\"}"), 400, "invalid-request");
        problem(call("POST", "/api/v1/retention/simulate", "[1,2"), 400, "invalid-request");
        List<String> many = new ArrayList<>();
        for (int i = 0; i <= RetentionController.MAX_SIMULATED_TIMES; i++) {
            many.add(START.minusSeconds(60L * i).toString());
        }
        ResponseEntity<String> oversized = call("POST", "/api/v1/retention/simulate",
                json.writeValueAsString(java.util.Map.of("policy", "7d", "times", many)));
        problem(oversized, 400, "invalid-request");
        assertThat(json.readTree(oversized.getBody()).get("detail").asText()).contains("at most 10000");

        assertThat(call("GET", "/api/v1/retention/policies", null).getBody()).isEqualTo(policiesBefore);
        assertThat(call("GET", "/api/v1/volumes/bad-vol/retention", null).getBody()).isEqualTo(retentionBefore);
        assertThat(json.readTree(retentionBefore).get("policy").asText()).isEqualTo("2w");
    }

    @Test
    void assignment_byNameOrText_getShowsBoth_updateFollows_deleteAllowedOnceUnassigned() throws Exception {
        backup("assign-vol", image(8, 22));
        JsonNode fresh = body(call("GET", "/api/v1/volumes/assign-vol/retention", null), 200);
        assertThat(fresh.get("policy").asText()).isEqualTo("1h");
        assertThat(fresh.get("name").asText()).isEqualTo("default");

        body(call("POST", "/api/v1/retention/policies", "{\"name\":\"assign-silver\",\"policy\":\"daily=7\"}"), 201);
        JsonNode a = body(call("PUT", "/api/v1/volumes/assign-vol/retention", "{\"name\":\"assign-silver\"}"), 200);
        assertThat(a.get("policy").asText()).isEqualTo("daily=7");
        assertThat(a.get("name").asText()).isEqualTo("assign-silver");
        assertThat(body(call("GET", "/api/v1/retention/policies/assign-silver", null), 200).get("volumes").toString())
                .isEqualTo("[\"assign-vol\"]");

        // the named policy changes: the volume follows, through the same path (expiries raised)
        body(call("PUT", "/api/v1/retention/policies/assign-silver", "{\"policy\":\"daily=7,weekly=4\"}"), 200);
        JsonNode followed = body(call("GET", "/api/v1/volumes/assign-vol/retention", null), 200);
        assertThat(followed.get("policy").asText()).isEqualTo("daily=7,weekly=4");
        JsonNode snaps = body(call("GET", "/api/v1/volumes/assign-vol/snapshots", null), 200);
        assertThat(snaps.get(0).get("keptBy").asText()).isEqualTo("weekly 1 of 4");

        // set as text: the name is dropped, and the policy can go
        JsonNode text = body(call("PUT", "/api/v1/volumes/assign-vol/retention", "{\"policy\":\"90d\"}"), 200);
        assertThat(text.get("policy").asText()).isEqualTo("90d");
        assertThat(text.get("name").isNull()).isTrue();
        assertThat(call("DELETE", "/api/v1/retention/policies/assign-silver", null).getStatusCode().value()).isEqualTo(204);

        // the built-in default can be assigned like any name
        JsonNode def = body(call("PUT", "/api/v1/volumes/assign-vol/retention", "{\"name\":\"default\"}"), 200);
        assertThat(def.get("name").asText()).isEqualTo("default");
        assertThat(def.get("policy").asText()).isEqualTo("1h");
    }

    @Test
    void updateNamedPolicy_shorterWhileAnAssignedVolumeIsComplianceLocked_409AndNoVolumeChanged() throws Exception {
        backup("lock-a", image(4, 31));
        backup("lock-b", image(4, 32));
        body(call("POST", "/api/v1/retention/policies", "{\"name\":\"lock-gold\",\"policy\":\"30d\"}"), 201);
        body(call("PUT", "/api/v1/volumes/lock-a/retention", "{\"name\":\"lock-gold\"}"), 200);
        body(call("PUT", "/api/v1/volumes/lock-b/retention", "{\"name\":\"lock-gold\"}"), 200);
        String until = clock.instant().plus(Duration.ofDays(365)).toString();
        body(call("PUT", "/api/v1/volumes/lock-b/snapshots/1/lock", "{\"mode\":\"compliance\",\"until\":\"" + until + "\"}"),
                200);
        String holdA = call("GET", "/api/v1/volumes/lock-a/snapshots/1/hold", null).getBody();

        ResponseEntity<String> refused = call("PUT", "/api/v1/retention/policies/lock-gold", "{\"policy\":\"1d\"}");
        problem(refused, 409, "conflict");
        assertThat(json.readTree(refused.getBody()).get("lockMode").asText()).isEqualTo("compliance");
        assertThat(body(call("GET", "/api/v1/retention/policies/lock-gold", null), 200).get("policy").asText()).isEqualTo("30d");
        assertThat(body(call("GET", "/api/v1/volumes/lock-a/retention", null), 200).get("policy").asText()).isEqualTo("30d");
        assertThat(body(call("GET", "/api/v1/volumes/lock-b/retention", null), 200).get("policy").asText()).isEqualTo("30d");
        assertThat(call("GET", "/api/v1/volumes/lock-a/snapshots/1/hold", null).getBody()).isEqualTo(holdA); // same expiry

        JsonNode longer = body(call("PUT", "/api/v1/retention/policies/lock-gold", "{\"policy\":\"8w\"}"), 200);
        assertThat(longer.get("volumes").toString()).isEqualTo("[\"lock-a\",\"lock-b\"]");
        assertThat(body(call("GET", "/api/v1/volumes/lock-b/retention", null), 200).get("policy").asText()).isEqualTo("8w");
    }

    @Test
    void simulate_times_answersKeptRuleAndExpiryPerSnapshot() throws Exception {
        String req = "{\"policy\":\"keep-last=1,daily=2\",\"now\":\"2026-01-10T12:00:00Z\",\"times\":["
                + "\"2026-01-10T08:00:00Z\",\"2026-01-08T08:00:00Z\",\"2026-01-09T08:00:00Z\",\"2026-01-09T20:00:00Z\"]}";
        JsonNode s = body(call("POST", "/api/v1/retention/simulate", req), 200);
        assertThat(s.get("policy").asText()).isEqualTo("keep-last=1,daily=2");
        assertThat(s.get("kept").asInt()).isEqualTo(2);
        assertThat(s.get("removed").asInt()).isEqualTo(2);
        JsonNode snaps = s.get("snapshots");
        assertThat(snaps.get(0).get("time").asText()).isEqualTo("2026-01-08T08:00:00Z"); // sorted
        assertThat(snaps.get(0).get("kept").asBoolean()).isFalse();
        assertThat(snaps.get(0).get("expiry").asText()).isEqualTo("2026-01-10T00:00:00Z");
        assertThat(snaps.get(1).get("rule").asText()).isEqualTo("daily 2 of 2");
        assertThat(snaps.get(1).get("expiry").asText()).isEqualTo("2026-01-11T00:00:00Z");
        assertThat(snaps.get(2).get("kept").asBoolean()).isFalse(); // second of its day, not the newest
        assertThat(snaps.get(3).get("rule").asText()).isEqualTo("keep-last 1 of 1");

        // a viewer may simulate (it changes nothing), not create
        TestTokens.authorize(rest, TestTokens.issue(context, Role.VIEWER));
        assertThat(call("POST", "/api/v1/retention/simulate", req).getStatusCode().value()).isEqualTo(200);
        problem(call("POST", "/api/v1/retention/policies", "{\"name\":\"v\",\"policy\":\"7d\"}"), 403, "forbidden");
    }

    /**
     * The issue's end-to-end test: a policy created and assigned over REST drives the real GC. The
     * simulator, asked before the clock moves, predicts which snapshots go; after the clock moves and a
     * GC run, exactly those are gone, their blocks are freed and the stored bytes drop by exactly them,
     * while the kept snapshots restore byte-identical and the checker finds nothing wrong.
     */
    @Test
    void policyAssignedOverRest_drivesRealGc_asTheSimulatorPredicted() throws Exception {
        body(call("POST", "/api/v1/retention/policies", "{\"name\":\"e2e-gold\",\"policy\":\"keep-last=2,daily=3\"}"), 201);
        clock.advance(Duration.between(clock.instant(), START.plus(Duration.ofDays(14)))); // Monday 16 March, 10:00
        Instant monday = clock.instant();
        byte[] img = image(8, 23);
        backup("e2e-vol", img);                                                   // b1 Mon 10:00
        body(call("PUT", "/api/v1/volumes/e2e-vol/retention", "{\"name\":\"e2e-gold\"}"), 200);
        List<byte[]> images = new ArrayList<>();
        images.add(img.clone());
        long[] offsets = {6, 24, 48, 96};                       // hours after b1: b2 Mon 16:00, b3 Tue, b4 Wed, b5 Fri
        for (int i = 0; i < offsets.length; i++) {
            clock.advance(Duration.between(clock.instant(), monday.plus(Duration.ofHours(offsets[i]))));
            byte[] change = image(1, 100 + i);
            System.arraycopy(change, 0, img, (i + 1) * BS, BS);                 // b(i+2) rewrites block i+1
            backup("e2e-vol", img);
            images.add(img.clone());
        }
        Instant later = monday.plus(Duration.ofDays(5)).plus(Duration.ofHours(2)); // Saturday 21 March, 12:00
        JsonNode sim = body(call("POST", "/api/v1/retention/simulate",
                "{\"name\":\"e2e-gold\",\"volume\":\"e2e-vol\",\"now\":\"" + later + "\"}"), 200);
        List<Long> predictedKept = new ArrayList<>();
        List<Long> predictedGone = new ArrayList<>();
        for (JsonNode s : sim.get("snapshots")) {
            (s.get("kept").asBoolean() ? predictedKept : predictedGone).add(s.get("sequence").asLong());
        }
        // b1 Mon (daily until Thu 0:00), b2 Mon 16:00 (second of its day), b3 Tue (daily until Fri 0:00) go;
        // b4 Wed (daily until Sat 0:00) is kept by keep-last, b5 Fri too
        assertThat(predictedGone).containsExactly(1L, 2L, 3L);
        assertThat(predictedKept).containsExactly(4L, 5L);
        assertThat(sim.get("snapshots").get(3).get("rule").asText()).isEqualTo("keep-last 2 of 2");
        assertThat(sim.get("snapshots").get(0).get("expiry").asText()).isEqualTo("2026-03-19T00:00:00Z");

        long[] before = storedBlocksAndBytes();
        clock.advance(Duration.between(clock.instant(), later));
        JsonNode report = runGcAndWait();
        assertThat(report.get("snapshotsDeleted").asInt()).isEqualTo(3);
        // blocks only b1..b3 held: the first versions of blocks 1, 2 and 3 (block 4's first version is in b4)
        assertThat(report.get("sweep").get("freed").asLong()).isEqualTo(3);
        long[] after = storedBlocksAndBytes();
        assertThat(before[0] - after[0]).isEqualTo(3);
        assertThat(before[1] - after[1]).isEqualTo(3L * BS);

        JsonNode listed = body(call("GET", "/api/v1/volumes/e2e-vol/snapshots", null), 200);
        List<Long> remaining = new ArrayList<>();
        listed.forEach(s -> remaining.add(s.get("sequence").asLong()));
        assertThat(remaining).isEqualTo(predictedKept);
        assertThat(listed.get(0).get("keptBy").asText()).isEqualTo("keep-last 2 of 2");
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, Role.AGENT))) {
            a.hello();
            assertThat(a.restore("e2e-vol", 4).image()).isEqualTo(images.get(3));
            assertThat(a.restore("e2e-vol", 5).image()).isEqualTo(images.get(4));
        }
        JsonNode f = runJob("/api/v1/gc/fsck");
        assertThat(f.get("referencedButFreed").get("count").asLong()).isZero();
        assertThat(f.get("missingBlocks").get("count").asLong()).isZero();
        assertThat(f.get("rcMismatches").get("count").asLong()).isZero();
        assertThat(f.get("etMismatches").get("count").asLong()).isZero();
    }

    /** Runs a GC cycle over REST as a job and returns its report once the job has succeeded. */
    private JsonNode runGcAndWait() {
        return runJob("/api/v1/gc/runs");
    }

    /** Starts a job ({@code POST path}: 202 and Location) and answers its result once it has succeeded. */
    private JsonNode runJob(String path) {
        ResponseEntity<String> started = call("POST", path, null);
        assertThat(started.getStatusCode().value()).as(started.getBody()).isEqualTo(202);
        String location = started.getHeaders().getLocation().toString();
        return JobPolling.awaitResult(url -> call("GET", url, null).getBody(), location);
    }

    /** Blocks with a location and the sum of their stored lengths (the {@code locations} layout: u32 length at offset 12). */
    private long[] storedBlocksAndBytes() {
        long blocks = 0;
        long bytes = 0;
        try (CheckedIterator it = db.iterator(db.handle(MetadataDb.Column.LOCATIONS))) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                blocks++;
                bytes += ByteBuffer.wrap(it.value(), 12, 4).getInt() & 0xffffffffL;
            }
        }
        return new long[] {blocks, bytes};
    }

    private void backup(String volume, byte[] img) {
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, Role.AGENT))) {
            a.hello();
            a.backup(volume, img, BS, false);
        }
    }

    private static byte[] image(int blocks, long seed) {
        byte[] img = new byte[blocks * BS];
        new Random(seed).nextBytes(img);
        return img;
    }

    private ResponseEntity<String> call(String method, String path, String body) {
        HttpHeaders h = new HttpHeaders();
        if (body != null) {
            h.setContentType(MediaType.APPLICATION_JSON);
        }
        return rest.exchange(path, HttpMethod.valueOf(method), new HttpEntity<>(body, h), String.class);
    }

    private JsonNode body(ResponseEntity<String> r, int status) throws IOException {
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(status);
        return json.readTree(r.getBody());
    }

    private void problem(ResponseEntity<String> r, int status, String type) throws IOException {
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(status);
        assertThat(r.getHeaders().getContentType()).as(r.getBody()).isNotNull();
        assertThat(r.getHeaders().getContentType().toString()).contains("problem+json");
        assertThat(json.readTree(r.getBody()).get("type").asText()).isEqualTo("urn:holdfast:problem:" + type);
    }

    private static List<String> names(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.forEach(p -> out.add(p.get("name").asText()));
        return out;
    }
}
