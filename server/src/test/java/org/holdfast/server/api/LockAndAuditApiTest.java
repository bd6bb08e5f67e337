package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.put;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Logins;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.UserDirectory;
import org.holdfast.server.security.VolumeScope;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.context.ApplicationContext;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.autoconfigure.web.servlet.AutoConfigureMockMvc;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.request.RequestPostProcessor;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Locks and the audit log over REST on the wired appliance. Until authentication is wired, the
 * caller is set on the servlet request (principal name and roles, as Spring Security would leave
 * them); with it, the lead swaps {@link #as} for Spring Security's {@code user(..).roles(..)}.
 */
@SpringBootTest(classes = HoldfastServer.class)
@AutoConfigureMockMvc
class LockAndAuditApiTest {
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-lock-audit-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry r) {
        r.add("holdfast.data-dir", DATA::toString);
        r.add("holdfast.tls.enabled", () -> "false"); // plain HTTP and agent port; TLS is tested end to end
        r.add("holdfast.ingest.host", () -> "127.0.0.1");
        r.add("holdfast.ingest.port", () -> "0");
        r.add("holdfast.store.min-free-space", () -> "0");
    }

    @Autowired
    MockMvc mvc;

    @Autowired
    IngestServer ingest;

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    private final ObjectMapper json = new ObjectMapper();

    @Autowired
    UserDirectory users;

    @Autowired
    Logins logins;

    @Autowired
    ApplicationContext context;

    /** A caller with a console session (real login), i.e. {@code Authorization: Bearer <session token>}. */
    static RequestPostProcessor bearer(String token) {
        return req -> {
            req.addHeader("Authorization", "Bearer " + token);
            return req;
        };
    }

    /** No credentials at all. */
    private static final RequestPostProcessor ANONYMOUS = req -> req;

    private RequestPostProcessor ADMIN;
    private RequestPostProcessor OPERATOR;

    @BeforeEach
    void logIn() throws Exception {
        String adminPassword = Files.readString(DATA.resolve("initial-admin-password")).trim();
        if (users.user("op").isEmpty()) {
            users.create("op", Role.OPERATOR, "operator-password-1", "test", "local");
        }
        ADMIN = bearer(logins.login("admin", adminPassword, "127.0.0.1").token());
        OPERATOR = bearer(logins.login("op", "operator-password-1", "127.0.0.1").token());
    }

    private MvcResult call(MockHttpServletRequestBuilder b, RequestPostProcessor who, Object body, int status) throws Exception {
        if (body != null) {
            b.contentType(MediaType.APPLICATION_JSON).content(json.writeValueAsString(body));
        }
        MvcResult r = mvc.perform(b.with(who)).andReturn();
        assertThat(r.getResponse().getStatus()).as(r.getResponse().getContentAsString()).isEqualTo(status);
        return r;
    }

    /** The result of the job a 202 answer started, once it has succeeded. */
    private JsonNode awaitJob(MvcResult accepted) {
        String location = accepted.getResponse().getHeader("Location");
        return JobPolling.awaitResult(path -> mvc.perform(get(path).with(ADMIN)).andReturn().getResponse().getContentAsString(),
                location);
    }

    private JsonNode body(MvcResult r) throws Exception {
        return json.readTree(r.getResponse().getContentAsString());
    }

    @Test
    void scriptedChanges_produceExactlyTheExpectedAuditEntries_locksRefuseAdmin_filtersAndPagingWork() throws Exception {
        byte[] img = new byte[16 * 4096];
        new Random(5).nextBytes(img);
        byte[] first = img.clone();
        String agentToken = TestTokens.issue(context, Role.AGENT, new VolumeScope(List.of("av")), null);
        String agent = context.getBean(ApiTokens.class).authenticate(agentToken).name();
        try (AgentDriver a = new AgentDriver(ingest.port(), agentToken)) {
            a.hello();
            a.backup("av", img, 4096, true);
            img[3] ^= 1;
            a.backup("av", img, 4096, true);
        }
        // the commits' entries are stamped in whole milliseconds before COMMITTED goes out: a few ms
        // later, "now - 1 ms" is past them even on a fast loopback (the window was ~1 ms: a rare flake)
        Thread.sleep(5);
        String from = Instant.now().minusMillis(1).toString();
        String until = Instant.now().plus(30, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS).toString();
        String v = "/api/v1/volumes/av";

        call(put(v + "/retention"), OPERATOR, Map.of("policy", "24h"), 200);
        call(put(v + "/snapshots/1/hold"), OPERATOR, null, 200);
        call(delete(v + "/snapshots/1/hold"), OPERATOR, null, 403);                 // governance: not an operator's
        assertThat(body(call(delete(v + "/snapshots/1/hold"), ADMIN, null, 200)).get("held").asBoolean()).isFalse();
        JsonNode locked = body(call(put(v + "/snapshots/1/lock"), ADMIN, Map.of("mode", "compliance", "until", until), 200));
        assertThat(locked.get("lockMode").asText()).isEqualTo("compliance");
        assertThat(locked.get("lockUntil").asText()).isEqualTo(until);
        // as admin, every way to remove or shorten the locked snapshot
        JsonNode p = body(call(delete(v + "/snapshots/1/lock"), ADMIN, null, 409));
        assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:conflict");
        assertThat(p.get("detail").asText()).contains("compliance lock on av@1 until " + until);
        assertThat(p.get("lockUntil").asText()).isEqualTo(until);
        call(delete(v + "/snapshots/1/hold"), ADMIN, null, 409);
        call(put(v + "/snapshots/1/lock"), ADMIN, Map.of("mode", "compliance", "until", "2000-01-01T00:00:00Z"), 400);
        call(put(v + "/snapshots/1/lock"), ADMIN, Map.of("mode", "governance"), 409);
        call(put(v + "/retention"), ADMIN, Map.of("policy", "1h"), 409);
        call(delete(v + "/snapshots/1"), ADMIN, null, 409);
        call(delete(v), ADMIN, null, 409);
        awaitJob(call(post("/api/v1/gc/runs"), ADMIN, null, 202));
        // governance lock with a date: the operator cannot release it, the admin can
        call(put(v + "/snapshots/2/lock"), OPERATOR, Map.of("mode", "governance", "until", until), 200);
        call(put(v + "/snapshots/2/lock"), OPERATOR, Map.of("mode", "compliance", "until", until), 403); // irreversible: admin only
        call(delete(v + "/snapshots/2/lock"), OPERATOR, null, 403);
        call(delete(v + "/snapshots/2/lock"), ADMIN, null, 200);
        call(delete(v + "/snapshots/1/lock"), ANONYMOUS, null, 401);

        JsonNode snaps = body(call(get(v + "/snapshots"), ADMIN, null, 200));
        assertThat(snaps.get(0).get("lockMode").asText()).isEqualTo("compliance");
        assertThat(snaps.get(0).get("lockUntil").asText()).isEqualTo(until);
        assertThat(snaps.get(1).get("lockMode").isNull()).isTrue();
        try (AgentDriver a = new AgentDriver(ingest.port(), agentToken)) {
            a.hello();
            assertThat(a.restore("av", 1).image()).isEqualTo(first);
        }
        JsonNode fsck = awaitJob(call(post("/api/v1/gc/fsck"), ADMIN, null, 202));
        assertThat(fsck.get("referencedButFreed").get("count").asLong()).isZero();
        assertThat(fsck.get("rcMismatches").get("count").asLong()).isZero();

        List<String> expected = List.of(
                "user:op|retention.set|volume:av|ok",
                "user:op|hold.place|volume:av@1|ok",
                "user:op|hold.release|volume:av@1|denied",
                "user:admin|hold.release|volume:av@1|ok",
                "user:admin|lock.place|volume:av@1|ok",
                "user:admin|lock.release|volume:av@1|conflict",
                "user:admin|hold.release|volume:av@1|conflict",
                "user:admin|lock.place|volume:av@1|failed",
                "user:admin|lock.place|volume:av@1|conflict",
                "user:admin|retention.set|volume:av|conflict",
                "user:admin|snapshot.delete|volume:av@1|conflict",
                "user:admin|volume.delete|volume:av|conflict",
                "user:admin|gc.run||ok",
                "user:op|lock.place|volume:av@2|ok",
                "user:op|lock.place|volume:av@2|denied",
                "user:op|lock.release|volume:av@2|denied",
                "user:admin|lock.release|volume:av@2|ok",
                "anonymous|lock.release|volume:av@1|denied",
                agent + "|snapshot.restore|volume:av@1|ok",
                "user:admin|gc.fsck||ok");
        List<String> newestFirst = new ArrayList<>(expected);
        java.util.Collections.reverse(newestFirst);
        JsonNode page = body(call(get("/api/v1/audit").param("from", from), ADMIN, null, 200));
        assertThat(rows(page)).containsExactlyElementsOf(newestFirst);
        assertThat(page.get("nextCursor").isNull()).isTrue();
        JsonNode conflict = page.get("entries").get(14);
        assertThat(conflict.get("detail").asText()).startsWith("409 compliance lock on av@1 until " + until);
        assertThat(conflict.get("source").asText()).startsWith("127.0.0.1:");

        // paging: pages of 5 chained by cursor give the same list
        List<String> paged = new ArrayList<>();
        String cursor = null;
        do {
            MockHttpServletRequestBuilder b = get("/api/v1/audit").param("from", from).param("limit", "5");
            if (cursor != null) {
                b.param("cursor", cursor);
            }
            JsonNode pg = body(call(b, ADMIN, null, 200));
            paged.addAll(rows(pg));
            cursor = pg.get("nextCursor").isNull() ? null : pg.get("nextCursor").asText();
        } while (cursor != null);
        assertThat(paged).containsExactlyElementsOf(newestFirst);

        // filters
        assertThat(rows(body(call(get("/api/v1/audit").param("from", from).param("principal", "user:op"), ADMIN, null, 200))))
                .containsExactly("user:op|lock.release|volume:av@2|denied", "user:op|lock.place|volume:av@2|denied",
                        "user:op|lock.place|volume:av@2|ok",
                        "user:op|hold.release|volume:av@1|denied", "user:op|hold.place|volume:av@1|ok",
                        "user:op|retention.set|volume:av|ok");
        assertThat(rows(body(call(get("/api/v1/audit").param("from", from).param("action", "hold.release")
                .param("result", "conflict"), ADMIN, null, 200)))).containsExactly("user:admin|hold.release|volume:av@1|conflict");
        assertThat(rows(body(call(get("/api/v1/audit").param("from", from).param("target", "volume:av@2"), ADMIN, null, 200))))
                .hasSize(4);
        assertThat(rows(body(call(get("/api/v1/audit").param("from", from).param("to", from), ADMIN, null, 200)))).isEmpty();
        call(get("/api/v1/audit").param("from", "yesterday"), ADMIN, null, 400);
        call(get("/api/v1/audit").param("limit", "0"), ADMIN, null, 400);
    }

    private static List<String> rows(JsonNode page) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : page.get("entries")) {
            out.add(e.get("principal").asText() + "|" + e.get("action").asText() + "|" + e.get("target").asText() + "|"
                    + e.get("result").asText());
        }
        return out;
    }

    @Test
    void placeLock_untilPastEpochMillis_400AndNoLock() throws Exception {
        byte[] img = new byte[4 * 4096];
        new Random(6).nextBytes(img);
        String agentToken = TestTokens.issue(context, Role.AGENT, new VolumeScope(List.of("far")), null);
        try (AgentDriver a = new AgentDriver(ingest.port(), agentToken)) {
            a.hello();
            a.backup("far", img, 4096, true);
        }
        String v = "/api/v1/volumes/far/snapshots/1/lock";
        // a valid ISO-8601 instant whose epoch millis overflow a long: was a 500
        JsonNode p = body(call(put(v), ADMIN, Map.of("mode", "compliance", "until", "+999999999-12-31T23:59:59Z"), 400));
        assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");
        assertThat(p.get("detail").asText()).contains("+999999999-12-31T23:59:59Z");
        assertThat(body(call(get(v), ADMIN, null, 200)).get("lockMode").isNull()).isTrue();
    }

    @Test
    void everyStateChangingEndpoint_hasAnAuditActionName() {
        List<String> missing = new ArrayList<>();
        mappings.getHandlerMethods().forEach((info, method) -> {
            boolean changing = info.getMethodsCondition().getMethods().stream().anyMatch(m -> m == RequestMethod.POST
                    || m == RequestMethod.PUT || m == RequestMethod.PATCH || m == RequestMethod.DELETE);
            if (changing && method.getMethodAnnotation(Audited.class) == null) {
                missing.add(info + " -> " + method);
            }
        });
        assertThat(missing).as("add @Audited and a row in docs/api.md's action table").isEmpty();
    }
}
