package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.common.protocol.Abort;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Volume administration over REST against the real appliance (RocksDB, ingest port, agent
 * sessions): create, list, details, update, quota refusals at BACKUP_BEGIN, snapshot details and
 * the 404 of unknown snapshots on every route; bad input gets a problem detail and changes nothing.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VolumeAdminApiTest {
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-volume-admin-test");
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

    @LocalServerPort
    int port;
    @Autowired
    ApplicationContext context;
    @Autowired
    IngestServer ingest;
    @Autowired
    Catalog catalog;
    @Autowired
    DataStore store;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();
    private String admin;
    private String operator;
    private String viewer;
    private String agent;

    @BeforeAll
    void tokens() {
        admin = TestTokens.issue(context, Role.ADMIN);
        operator = TestTokens.issue(context, Role.OPERATOR);
        viewer = TestTokens.issue(context, Role.VIEWER);
        agent = TestTokens.issue(context, Role.AGENT);
    }

    private HttpResponse<String> call(String method, String path, String body, String token) {
        return RestCalls.call(http, port, method, path, body, token);
    }

    private JsonNode ok(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as("%s", r.body()).isEqualTo(status);
        try {
            return r.body().isEmpty() ? null : json.readTree(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private JsonNode problem(HttpResponse<String> r, int status, String type) {
        assertThat(r.statusCode()).as("%s", r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).contains("application/problem+json");
        JsonNode p = ok(r, status);
        assertThat(p.get("type").asText()).as("%s", r.body()).isEqualTo(type);
        assertThat(p.get("detail").asText()).isNotBlank();
        return p;
    }

    private JsonNode details(String volume) {
        return ok(call("GET", "/api/v1/volumes/" + volume, null, viewer), 200);
    }

    private static byte[] random(int bytes, long seed) {
        byte[] b = new byte[bytes];
        new Random(seed).nextBytes(b);
        return b;
    }

    // ------------------------------------------------------------------ create

    @Test
    void create_valid_201WithLocationAndSettings() {
        HttpResponse<String> r = call("POST", "/api/v1/volumes",
                "{\"name\":\"c-ok\",\"blockSize\":8192,\"policy\":\"keep-last=3,daily=7\",\"quotaBytes\":1048576}", operator);
        JsonNode v = ok(r, 201);
        assertThat(r.headers().firstValue("Location")).hasValue("/api/v1/volumes/c-ok");
        assertThat(v.get("name").asText()).isEqualTo("c-ok");
        assertThat(v.get("blockSize").asInt()).isEqualTo(8192);
        assertThat(v.get("policy").asText()).isEqualTo("keep-last=3,daily=7");
        assertThat(v.get("quotaBytes").asLong()).isEqualTo(1048576);
        assertThat(v.get("snapshotCount").asInt()).isZero();
        assertThat(v.get("latestSequence").asLong()).isZero();
        assertThat(v.get("domain").asText()).isEqualTo("default");
        assertThat(v.get("lastBackup").isNull()).isTrue();
        assertThat(Instant.parse(v.get("createdAt").asText())).isNotNull();
        assertThat(details("c-ok")).isEqualTo(v);
        assertThat(ok(call("GET", "/api/v1/volumes/c-ok/snapshots", null, viewer), 200)).isEmpty();
        String audit = call("GET", "/api/v1/audit", null, admin).body();
        assertThat(audit).contains("volume.create").contains("volume:c-ok");
    }

    @Test
    void create_existing_409AndNothingChanged() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"c-dup\",\"quotaBytes\":100}", operator), 201);
        JsonNode before = details("c-dup");
        problem(call("POST", "/api/v1/volumes", "{\"name\":\"c-dup\",\"blockSize\":65536,\"quotaBytes\":5}", operator), 409,
                "urn:holdfast:problem:volume-exists");
        assertThat(details("c-dup")).isEqualTo(before);
    }

    @Test
    void create_badInput_400AndNoVolume() {
        String[] bodies = {
            "{\"name\":\"c-bad.1\",\"blockSize\":1000}",
            "{\"name\":\"c-bad.2\",\"blockSize\":256}",
            "{\"name\":\"c-bad.3\",\"blockSize\":4194304}",
            "{\"name\":\"c-bad.4\",\"blockSize\":\"4096\"}",
            "{\"name\":\"c-bad.5\",\"blockSize\":4096.5}",
            "{\"name\":\"c-bad.6\",\"blockSize\":99999999999}",
            "{\"name\":\"c-bad.7\",\"policy\":\"forever\"}",
            "{\"name\":\"c-bad.8\",\"policy\":30}",
            "{\"name\":\"c-bad.9\",\"quotaBytes\":-1}",
            "{\"name\":\"c-bad.10\",\"quotaBytes\":\"1G\"}",
            "{\"name\":\"c-bad.11\",\"quotaBytes\":1e400}",
            "{\"name\":\"c-bad.12\",\"quota\":5}",
            "{\"name\":\"c-bad.13\",",
            "[\"c-bad.14\"]",
            "{\"blockSize\":4096}",
            "{\"name\":\".c-bad\"}",
            "{\"name\":\"" + "c".repeat(129) + "\"}",
            "{\"name\":17}",
            "",
        };
        for (String body : bodies) {
            problem(call("POST", "/api/v1/volumes", body, operator), 400, "urn:holdfast:problem:invalid-request");
        }
        HttpResponse<String> list = call("GET", "/api/v1/volumes?name=c-bad", null, viewer);
        assertThat(ok(list, 200)).as("no volume was created").isEmpty();
        assertThat(catalog.volumes()).noneMatch(v -> v.name().name().contains("c-bad") || v.name().name().startsWith("ccc"));
    }

    @Test
    void create_rolesAndDomain_onlyOperatorsCreateOnlyAdminsPickADomain() {
        problem(call("POST", "/api/v1/volumes", "{\"name\":\"c-viewer\"}", viewer), 403, "urn:holdfast:problem:forbidden");
        problem(call("POST", "/api/v1/volumes", "{\"name\":\"c-agent\"}", agent), 403, "urn:holdfast:problem:forbidden");
        problem(call("POST", "/api/v1/volumes", "{\"name\":\"c-dom-op\",\"domain\":\"tenant-a\"}", operator), 403,
                "urn:holdfast:problem:forbidden");
        problem(call("POST", "/api/v1/volumes", "{\"name\":\"c-dom-bad\",\"domain\":\"no spaces\"}", admin), 400,
                "urn:holdfast:problem:invalid-request");
        assertThat(catalog.volumes()).noneMatch(v -> List.of("c-viewer", "c-agent", "c-dom-op", "c-dom-bad").contains(v.name().name()));
        JsonNode v = ok(call("POST", "/api/v1/volumes", "{\"name\":\"c-dom\",\"domain\":\"tenant-a\"}", admin), 201);
        assertThat(v.get("domain").asText()).isEqualTo("tenant-a");
        assertThat(v.get("blockSize").asInt()).isEqualTo(4096);
    }

    @Test
    void create_whileABackupCreatesTheName_409AndTheBackupCommitsIntact() {
        byte[] img = random(6 * 4096, 61);
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            BackupReady ready = a.begin("c-race", 4096, img.length, 0);
            assertThat(ready.parentSequence()).isZero();
            problem(call("POST", "/api/v1/volumes", "{\"name\":\"c-race\",\"blockSize\":65536,\"quotaBytes\":1}", operator), 409,
                    "urn:holdfast:problem:conflict");
            a.sendEntriesAndBlocks(img, 4096, 0, 6, true, null);
            a.send(new org.holdfast.common.protocol.Commit(img.length));
            assertThat(a.expect(org.holdfast.common.protocol.Committed.class).sequence()).isEqualTo(1);
            assertThat(a.restore("c-race", 1).image()).isEqualTo(img);
        }
        JsonNode v = details("c-race");
        assertThat(v.get("blockSize").asInt()).isEqualTo(4096);
        assertThat(v.get("quotaBytes").isNull()).isTrue();
    }

    // ------------------------------------------------------------------ list

    @Test
    void list_pagedAndFiltered_totalsAndNextLink() {
        for (int i = 0; i < 5; i++) {
            ok(call("POST", "/api/v1/volumes", "{\"name\":\"pg-" + i + "\"}", operator), 201);
        }
        HttpResponse<String> first = call("GET", "/api/v1/volumes?name=PG-&limit=2", null, viewer);
        JsonNode a = ok(first, 200);
        assertThat(a).hasSize(2);
        assertThat(a.get(0).get("name").asText()).isEqualTo("pg-0");
        assertThat(first.headers().firstValue("X-Total-Count")).hasValue("5");
        assertThat(first.headers().firstValue("Link")).hasValue("</api/v1/volumes?offset=2&limit=2&name=PG->; rel=\"next\"");
        HttpResponse<String> last = call("GET", "/api/v1/volumes?name=pg-&offset=4&limit=2", null, viewer);
        assertThat(ok(last, 200)).hasSize(1);
        assertThat(last.headers().firstValue("Link")).isEmpty();
        assertThat(ok(call("GET", "/api/v1/volumes?name=pg-&offset=9", null, viewer), 200)).isEmpty();
        for (String q : List.of("limit=0", "limit=1001", "offset=-1", "limit=abc", "offset=1.5")) {
            problem(call("GET", "/api/v1/volumes?" + q, null, viewer), 400, "urn:holdfast:problem:invalid-request");
        }
    }

    @Test
    void list_agentToken_seesOnlyItsScope() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"scope-in1\"}", operator), 201);
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"scope-out1\"}", operator), 201);
        String scoped = TestTokens.issue(context, Role.AGENT, new VolumeScope(List.of("scope-in*")), null);
        HttpResponse<String> r = call("GET", "/api/v1/volumes?name=scope-", null, scoped);
        assertThat(ok(r, 200).findValuesAsText("name")).containsExactly("scope-in1");
        assertThat(r.headers().firstValue("X-Total-Count")).hasValue("1");
        ok(call("GET", "/api/v1/volumes/scope-in1", null, scoped), 200);
        problem(call("GET", "/api/v1/volumes/scope-out1", null, scoped), 404, "urn:holdfast:problem:unknown-volume");
        problem(call("PATCH", "/api/v1/volumes/scope-in1", "{\"quotaBytes\":1}", scoped), 403, "urn:holdfast:problem:forbidden");
        assertThat(details("scope-in1").get("quotaBytes").isNull()).isTrue();
        try (AgentDriver a = new AgentDriver(ingest.port(), scoped)) {
            a.hello();
            a.send(new BackupBegin("scope-out1", 4096, 4096, 0));
            assertThat(a.expectErrorAndClose().code()).isEqualTo(ErrorCode.UNAUTHORIZED);
        }
        assertThat(details("scope-out1").get("lastBackup").isNull()).as("an outsider leaves no trace on the volume").isTrue();
    }

    // ------------------------------------------------------------------ first backup of a REST-created volume

    @Test
    void restCreatedVolume_agentBackup_usesItsBlockSizeAndRecordsTheResult() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"first-8k\",\"blockSize\":8192}", operator), 201);
        byte[] img = random(10 * 8192, 11);
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.send(new BackupBegin("first-8k", 0, img.length, 0)); // 0: the volume's block size
            assertThat(a.expect(BackupReady.class).blockSize()).isEqualTo(8192);
            a.send(new Abort());
            a.send(new org.holdfast.common.protocol.ListSnapshots("first-8k")); // answered after the ABORT was handled
            a.expect(org.holdfast.common.protocol.SnapshotList.class);
        }
        assertThat(details("first-8k").get("lastBackup").get("result").asText()).isEqualTo("failure");
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.send(new BackupBegin("first-8k", 4096, img.length, 0));
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.BLOCK_SIZE_MISMATCH);
            assertThat(e.message()).contains("8192").contains("first-8k");
        }
        JsonNode failed = details("first-8k").get("lastBackup");
        assertThat(failed.get("result").asText()).isEqualTo("failure");
        assertThat(failed.get("message").asText()).contains("BLOCK_SIZE_MISMATCH");
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.backup("first-8k", img, 8192, true);
        }
        JsonNode v = details("first-8k");
        assertThat(v.get("latestSequence").asLong()).isEqualTo(1);
        assertThat(v.get("snapshotCount").asInt()).isEqualTo(1);
        assertThat(v.get("volumeBytes").asLong()).isEqualTo(img.length);
        assertThat(v.get("lastBackup").get("result").asText()).isEqualTo("success");
        assertThat(v.get("lastBackup").get("snapshotId").asText()).isEqualTo("first-8k@1");
        assertThat(v.get("lastBackup").get("message").isNull()).isTrue();
        assertThat(v.get("newestSnapshotBytes").asLong()).isGreaterThanOrEqualTo(img.length); // random data does not compress
        assertThat(v.get("uniqueBytes").asLong()).isEqualTo(v.get("retainedBytes").asLong());
    }

    // ------------------------------------------------------------------ quota

    @Test
    void quota_refusalAfterASuccess_isTheAgentsLastResultAndAnAuditEntry() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"q-led\",\"quotaBytes\":65536}", operator), 201);
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.backup("q-led", random(65536, 23), 4096, true);
        }
        assertThat(agentResult("q-led").get("result").asText()).isEqualTo("success");
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.send(new BackupBegin("q-led", 4096, 32 * 4096, 0));
            assertThat(a.expectErrorAndClose().code()).isEqualTo(ErrorCode.QUOTA_EXCEEDED);
        }
        JsonNode last = agentResult("q-led");
        assertThat(last.get("result").asText()).isEqualTo("error");
        assertThat(last.get("message").asText()).startsWith("refused at BACKUP_BEGIN: QUOTA_EXCEEDED: volume 'q-led' is")
                .contains("raise the quota");
        assertThat(last.get("bytes").asLong()).isZero();
        JsonNode entries = ok(call("GET", "/api/v1/audit?action=backup.begin&target=volume:q-led", null, admin), 200).get("entries");
        assertThat(entries).hasSize(1);
        assertThat(entries.get(0).get("result").asText()).isEqualTo("failed");
        assertThat(entries.get(0).get("detail").asText()).startsWith("QUOTA_EXCEEDED: volume 'q-led' is");
    }

    /** The volume's entry in GET /api/v1/agents (one agent token backs it up in these tests). */
    private JsonNode agentResult(String volume) {
        JsonNode agents = ok(call("GET", "/api/v1/agents", null, operator), 200);
        List<JsonNode> found = new ArrayList<>();
        agents.forEach(t -> t.get("volumes").forEach(v -> {
            if (v.get("volume").asText().equals(volume)) {
                found.add(v);
            }
        }));
        assertThat(found).as("%s", agents).hasSize(1);
        return found.get(0);
    }

    @Test
    void quota_backupOverIt_refusedAtBeginAndNothingStored() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"q-vol\",\"quotaBytes\":65536}", operator), 201);
        byte[] img = random(32 * 4096, 21);
        long blocksBefore = store.stats().appendedBlocks();
        long nextPbnBefore = store.nextPbn();
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.send(new BackupBegin("q-vol", 4096, img.length, 0));
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.QUOTA_EXCEEDED);
            assertThat(e.message()).contains("q-vol").contains("65536").contains(Integer.toString(img.length)).contains("quota")
                    .contains("raise");
        }
        assertThat(catalog.snapshots(new org.holdfast.common.id.VolumeId("q-vol"))).isEmpty();
        assertThat(store.stats().appendedBlocks()).isEqualTo(blocksBefore);
        assertThat(store.nextPbn()).isEqualTo(nextPbnBefore);
        JsonNode last = details("q-vol").get("lastBackup");
        assertThat(last.get("result").asText()).isEqualTo("failure");
        assertThat(last.get("message").asText()).contains("QUOTA_EXCEEDED");

        // exactly at the quota is allowed; raising the quota lets the big one through
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.backup("q-vol", random(65536, 22), 4096, true);
        }
        ok(call("PATCH", "/api/v1/volumes/q-vol", "{\"quotaBytes\":" + img.length + "}", operator), 200);
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.backup("q-vol", img, 4096, true);
        }
        assertThat(details("q-vol").get("snapshotCount").asInt()).isEqualTo(2);
        ok(call("PATCH", "/api/v1/volumes/q-vol", "{\"quotaBytes\":null}", operator), 200);
        assertThat(details("q-vol").get("quotaBytes").isNull()).isTrue();
    }

    // ------------------------------------------------------------------ usage

    @Test
    void usage_sharedAndUniqueBlocks_countedAndUpdatedAfterDeletion() {
        byte[] shared = random(16 * 4096, 31);
        byte[] bigger = new byte[24 * 4096];
        System.arraycopy(shared, 0, bigger, 0, shared.length);
        System.arraycopy(random(8 * 4096, 32), 0, bigger, shared.length, 8 * 4096);
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.backup("u-a", shared, 4096, false);
            a.backup("u-b", bigger, 4096, false);
        }
        JsonNode a = details("u-a");
        JsonNode b = details("u-b");
        assertThat(a.get("retainedBytes").asLong()).isEqualTo(16L * 4096); // raw payloads, stored as sent
        assertThat(a.get("newestSnapshotBytes").asLong()).isEqualTo(16L * 4096);
        assertThat(a.get("uniqueBytes").asLong()).isZero();
        assertThat(b.get("retainedBytes").asLong()).isEqualTo(24L * 4096);
        assertThat(b.get("uniqueBytes").asLong()).isEqualTo(8L * 4096);

        ok(call("DELETE", "/api/v1/volumes/u-b", null, operator), 200);
        assertThat(details("u-a").get("uniqueBytes").asLong()).as("cache dropped after the deletion").isEqualTo(16L * 4096);
        assertThat(ok(call("GET", "/api/v1/volumes/u-a?usage=false", null, viewer), 200).get("uniqueBytes").isNull()).isTrue();
    }

    // ------------------------------------------------------------------ update

    @Test
    void update_policyAndQuota_changedAndEchoedInUserSyntax() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"up-ok\"}", operator), 201);
        JsonNode v = ok(call("PATCH", "/api/v1/volumes/up-ok", "{\"policy\":\"keep-last=2,weekly=4\",\"quotaBytes\":123456}", operator), 200);
        assertThat(v.get("policy").asText()).isEqualTo("keep-last=2,weekly=4");
        assertThat(v.get("quotaBytes").asLong()).isEqualTo(123456);
        assertThat(ok(call("PATCH", "/api/v1/volumes/up-ok", "{\"policy\":\"30d\"}", operator), 200).get("quotaBytes").asLong())
                .as("a field not given stays").isEqualTo(123456);
        assertThat(details("up-ok").get("policy").asText()).isEqualTo("30d");
    }

    @Test
    void update_badInput_4xxAndNothingChanged() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"up-bad\",\"policy\":\"7d\",\"quotaBytes\":1000}", operator), 201);
        JsonNode before = details("up-bad");
        String[] bodies = {
            "{}", "{\"quotaBytes\":-5}", "{\"quotaBytes\":1.5}", "{\"quotaBytes\":\"5\"}", "{\"policy\":5}", "{\"policy\":null}",
            "{\"policy\":\"sometimes\"}", "{\"policy\":\"30d\",\"quotaBytes\":-1}", "{\"blockSize\":8192}", "{\"policy\":", "[]", "\"30d\"",
        };
        for (String body : bodies) {
            problem(call("PATCH", "/api/v1/volumes/up-bad", body, operator), 400, "urn:holdfast:problem:invalid-request");
        }
        problem(call("PATCH", "/api/v1/volumes/up-bad", "{\"quotaBytes\":1}", viewer), 403, "urn:holdfast:problem:forbidden");
        problem(call("PATCH", "/api/v1/volumes/no-such-vol", "{\"quotaBytes\":1}", operator), 404, "urn:holdfast:problem:unknown-volume");
        assertThat(details("up-bad")).isEqualTo(before);
    }

    @Test
    void delete_viewerRefused_operatorDeletesAndSettingsDoNotComeBack() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"del-vol\",\"quotaBytes\":777}", operator), 201);
        problem(call("DELETE", "/api/v1/volumes/del-vol", null, viewer), 403, "urn:holdfast:problem:forbidden");
        assertThat(details("del-vol").get("quotaBytes").asLong()).isEqualTo(777);
        ok(call("DELETE", "/api/v1/volumes/del-vol", null, operator), 200);
        problem(call("GET", "/api/v1/volumes/del-vol", null, viewer), 404, "urn:holdfast:problem:unknown-volume");
        JsonNode again = ok(call("POST", "/api/v1/volumes", "{\"name\":\"del-vol\"}", operator), 201);
        assertThat(again.get("quotaBytes").isNull()).as("a new volume of the old name starts clean").isTrue();
    }

    // ------------------------------------------------------------------ snapshots

    @Test
    void snapshots_listAndDetails_expiryHoldAndOneIdFormat() {
        ok(call("POST", "/api/v1/volumes", "{\"name\":\"s-vol\",\"policy\":\"30d\"}", operator), 201);
        byte[] img = random(8 * 4096, 41);
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.backup("s-vol", img, 4096, true);
            a.backup("s-vol", img, 4096, true);
        }
        JsonNode list = ok(call("GET", "/api/v1/volumes/s-vol/snapshots", null, viewer), 200);
        assertThat(list).hasSize(2);
        JsonNode first = list.get(0);
        assertThat(first.get("id").asText()).isEqualTo("s-vol@1");
        Instant created = Instant.parse(first.get("createdAt").asText());
        Instant expires = Instant.parse(first.get("expiresAt").asText());
        assertThat(expires).isBetween(created.plusSeconds(30L * 86400 - 5), created.plusSeconds(30L * 86400 + 5));
        assertThat(first.get("held").asBoolean()).isFalse();
        assertThat(first.has("keptBy")).isTrue();

        JsonNode byId = ok(call("GET", "/api/v1/volumes/s-vol/snapshots/s-vol@1", null, viewer), 200);
        JsonNode bySeq = ok(call("GET", "/api/v1/volumes/s-vol/snapshots/1", null, viewer), 200);
        assertThat(byId).isEqualTo(first).isEqualTo(bySeq);

        JsonNode hold = ok(call("PUT", "/api/v1/volumes/s-vol/snapshots/s-vol@1/hold", null, operator), 200);
        assertThat(hold.get("held").asBoolean()).isTrue();
        JsonNode held = ok(call("GET", "/api/v1/volumes/s-vol/snapshots/1", null, viewer), 200);
        assertThat(held.get("held").asBoolean()).isTrue();
        assertThat(held.get("lockMode").asText()).isEqualTo("governance");
        assertThat(held.get("lockedBy").asText()).isNotBlank();
        problem(call("DELETE", "/api/v1/volumes/s-vol/snapshots/1", null, operator), 409, "urn:holdfast:problem:conflict");
        ok(call("DELETE", "/api/v1/volumes/s-vol/snapshots/1/hold", null, admin), 200);
        assertThat(ok(call("GET", "/api/v1/volumes/s-vol/snapshots/1/hold", null, viewer), 200).get("held").asBoolean()).isFalse();
    }

    @Test
    void snapshots_unknownOrMalformed_404Or400OnEveryRoute() {
        byte[] img = random(4 * 4096, 51);
        try (AgentDriver a = new AgentDriver(ingest.port(), agent)) {
            a.hello();
            a.backup("s-404", img, 4096, true);
        }
        String[][] routes = {
            {"GET", ""}, {"DELETE", ""}, {"GET", "/hold"}, {"PUT", "/hold"}, {"DELETE", "/hold"},
            {"GET", "/lock"}, {"PUT", "/lock"}, {"DELETE", "/lock"},
        };
        for (String[] r : routes) {
            String body = r[0].equals("PUT") && r[1].equals("/lock") ? "{\"mode\":\"governance\"}" : null;
            for (String missing : List.of("9", "s-404@9")) {
                problem(call(r[0], "/api/v1/volumes/s-404/snapshots/" + missing + r[1], body, admin), 404,
                        "urn:holdfast:problem:unknown-snapshot");
            }
            problem(call(r[0], "/api/v1/volumes/nobody-here/snapshots/1" + r[1], body, admin), 404, "urn:holdfast:problem:unknown-volume");
            for (String bad : List.of("abc", "0", "other@1")) {
                problem(call(r[0], "/api/v1/volumes/s-404/snapshots/" + bad + r[1], body, admin), 400,
                        "urn:holdfast:problem:invalid-request");
            }
        }
        for (String body : List.of("{\"mode\":\"forever\"}", "{\"mode\":5}", "{\"mode\":", "{}", "[]",
                "{\"mode\":\"compliance\",\"until\":\"tomorrow\"}", "{\"mode\":\"governance\",\"until\":17}")) {
            problem(call("PUT", "/api/v1/volumes/s-404/snapshots/s-404@1/lock", body, admin), 400, "urn:holdfast:problem:invalid-request");
        }
        problem(call("DELETE", "/api/v1/volumes/nobody-here", null, admin), 404, "urn:holdfast:problem:unknown-volume");
        JsonNode s = ok(call("GET", "/api/v1/volumes/s-404/snapshots/1", null, viewer), 200);
        assertThat(s.get("held").asBoolean()).as("nothing was placed").isFalse();
        assertThat(ok(call("GET", "/api/v1/volumes/s-404/snapshots", null, viewer), 200)).hasSize(1);
    }

    @Test
    void createAndUpdate_namedPolicy_volumeFollowsTheNameAndUnknownNamesChangeNothing() {
        ok(call("POST", "/api/v1/retention/policies", "{\"name\":\"va-gold\",\"policy\":\"keep-last=3,daily=7\"}", operator), 201);
        problem(call("POST", "/api/v1/volumes", "{\"name\":\"va-named-x\",\"policyName\":\"no-such\"}", operator), 404,
                "urn:holdfast:problem:unknown-policy");
        problem(call("GET", "/api/v1/volumes/va-named-x", null, viewer), 404, "urn:holdfast:problem:unknown-volume");
        problem(call("POST", "/api/v1/volumes", "{\"name\":\"va-named-x\",\"policy\":\"30d\",\"policyName\":\"va-gold\"}",
                operator), 400, "urn:holdfast:problem:invalid-request");
        problem(call("GET", "/api/v1/volumes/va-named-x", null, viewer), 404, "urn:holdfast:problem:unknown-volume");

        ok(call("POST", "/api/v1/volumes", "{\"name\":\"va-named\",\"policyName\":\"va-gold\"}", operator), 201);
        JsonNode r = ok(call("GET", "/api/v1/volumes/va-named/retention", null, viewer), 200);
        assertThat(r.get("name").asText()).isEqualTo("va-gold");
        assertThat(r.get("policy").asText()).isEqualTo("keep-last=3,daily=7");

        // a PATCH naming an unknown policy changes neither the policy nor the quota given with it
        problem(call("PATCH", "/api/v1/volumes/va-named", "{\"policyName\":\"no-such\",\"quotaBytes\":5}", operator), 404,
                "urn:holdfast:problem:unknown-policy");
        assertThat(details("va-named").get("quotaBytes").isNull()).as("%s", details("va-named")).isTrue();
        ok(call("PATCH", "/api/v1/volumes/va-named", "{\"policy\":\"30d\"}", operator), 200);
        r = ok(call("GET", "/api/v1/volumes/va-named/retention", null, viewer), 200);
        assertThat(r.get("name").isNull()).as("text replaces the assignment: %s", r).isTrue();
        assertThat(r.get("policy").asText()).isEqualTo("30d");
        ok(call("PATCH", "/api/v1/volumes/va-named", "{\"policyName\":\"va-gold\"}", operator), 200);
        assertThat(ok(call("GET", "/api/v1/volumes/va-named/retention", null, viewer), 200).get("name").asText()).isEqualTo("va-gold");
    }
}
