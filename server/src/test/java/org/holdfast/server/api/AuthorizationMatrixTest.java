package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Every REST endpoint against every kind of caller. The rows are written out below; an endpoint
 * that {@link RequestMappingHandlerMapping} knows and that has no row fails the test, so a new
 * endpoint cannot ship without deciding who may call it.
 *
 * <p>Calls that pass authorization but would change state use names that do not exist (answer 404)
 * or an empty body (answer 400), so the matrix can run in any order. Volume {@code mx-a} is in the
 * agent token's scope, {@code mx-b} is not: the agent gets 404 for it, exactly as for a volume that
 * does not exist, so that names do not leak.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AuthorizationMatrixTest {
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-authz-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @org.springframework.test.context.DynamicPropertySource
    static void properties(org.springframework.test.context.DynamicPropertyRegistry r) {
        r.add("holdfast.data-dir", DATA::toString);
        r.add("holdfast.tls.enabled", () -> "false"); // plain HTTP and agent port; TLS is tested end to end
        r.add("holdfast.ingest.host", () -> "127.0.0.1");
        r.add("holdfast.ingest.port", () -> "0");
        r.add("holdfast.store.min-free-space", () -> "0");
    }

    /** The columns: kinds of caller. */
    enum Caller { NONE, MALFORMED, WRONG, EXPIRED, REVOKED, VIEWER, OPERATOR, ADMIN, AGENT_IN, AGENT_OUT }

    /** One endpoint: the path for every caller but AGENT_OUT, the path AGENT_OUT uses, a body, and a status per column. */
    record Row(String method, String path, String agentOutPath, String body, int... expected) {
    }

    private static final int[] AUTH = {401, 401, 401, 401, 401};

    private static int[] row(int viewer, int operator, int admin, int agentIn, int agentOut) {
        return new int[] {401, 401, 401, 401, 401, viewer, operator, admin, agentIn, agentOut};
    }

    private static int[] all(int status) {
        return new int[] {status, status, status, status, status, status, status, status, status, status};
    }

    /** Key: method and pattern as the handler mapping names them. */
    private static final Map<String, Row> ROWS = new LinkedHashMap<>();

    private static void add(String method, String pattern, String path, String agentOutPath, String body, int... expected) {
        assertThat(expected).hasSize(Caller.values().length);
        ROWS.put(method + " " + pattern, new Row(method, path, agentOutPath, body, expected));
    }

    static {
        // volumes (read): viewer and above; an agent only within its scope, else 404
        add("GET", "/api/v1/volumes", "/api/v1/volumes", null, null, row(200, 200, 200, 200, 200));
        add("GET", "/api/v1/volumes/{name}", "/api/v1/volumes/mx-a", "/api/v1/volumes/mx-b", null, row(200, 200, 200, 200, 404));
        add("GET", "/api/v1/volumes/{name}/snapshots", "/api/v1/volumes/mx-a/snapshots", "/api/v1/volumes/mx-b/snapshots", null,
                row(200, 200, 200, 200, 404));
        add("GET", "/api/v1/volumes/{name}/retention", "/api/v1/volumes/mx-a/retention", "/api/v1/volumes/mx-b/retention", null,
                row(200, 200, 200, 200, 404));
        add("GET", "/api/v1/volumes/{name}/snapshots/{snapshot}/hold", "/api/v1/volumes/mx-a/snapshots/1/hold",
                "/api/v1/volumes/mx-b/snapshots/1/hold", null, row(200, 200, 200, 200, 404));
        // volumes (change): operator and above; never an agent over REST
        add("PUT", "/api/v1/volumes/{name}/retention", "/api/v1/volumes/mx-none/retention", null, "{}", row(403, 400, 400, 403, 403));
        add("PUT", "/api/v1/volumes/{name}/snapshots/{snapshot}/hold", "/api/v1/volumes/mx-none/snapshots/1/hold", null, null,
                row(403, 404, 404, 403, 403));
        // releasing a hold or lock is an admin's: the role is checked before the volume, so nothing is named to others
        add("DELETE", "/api/v1/volumes/{name}/snapshots/{snapshot}/hold", "/api/v1/volumes/mx-none/snapshots/1/hold", null, null,
                row(403, 403, 404, 403, 403));
        add("DELETE", "/api/v1/volumes/{name}", "/api/v1/volumes/mx-none", null, null, row(403, 404, 404, 403, 403));
        add("DELETE", "/api/v1/volumes/{name}/snapshots/{snapshot}", "/api/v1/volumes/mx-none/snapshots/1", null, null,
                row(403, 404, 404, 403, 403));
        // retention locks: read like holds; placed by an operator
        add("GET", "/api/v1/volumes/{name}/snapshots/{snapshot}/lock", "/api/v1/volumes/mx-a/snapshots/1/lock",
                "/api/v1/volumes/mx-b/snapshots/1/lock", null, row(200, 200, 200, 200, 404));
        add("PUT", "/api/v1/volumes/{name}/snapshots/{snapshot}/lock", "/api/v1/volumes/mx-none/snapshots/1/lock", null,
                "{\"mode\":\"governance\"}", row(403, 404, 404, 403, 403));
        add("DELETE", "/api/v1/volumes/{name}/snapshots/{snapshot}/lock", "/api/v1/volumes/mx-none/snapshots/1/lock", null, null,
                row(403, 403, 404, 403, 403));
        // volume administration: operator and above create and change; a dedup domain needs an admin (403 before the body is read)
        add("POST", "/api/v1/volumes", "/api/v1/volumes", null, "{}", row(403, 400, 400, 403, 403));
        add("PATCH", "/api/v1/volumes/{name}", "/api/v1/volumes/mx-none", null, "{}", row(403, 404, 404, 403, 403));
        add("GET", "/api/v1/volumes/{name}/snapshots/{snapshot}", "/api/v1/volumes/mx-a/snapshots/mx-a@1",
                "/api/v1/volumes/mx-b/snapshots/1", null, row(200, 200, 200, 200, 404));
        // the audit log: admin only
        add("GET", "/api/v1/audit", "/api/v1/audit", null, null, row(403, 403, 200, 403, 403));
        // catalog backups: admin only (no backup directory set here: 409 catalog-backup-off, nothing starts)
        add("GET", "/api/v1/catalog/backups", "/api/v1/catalog/backups", null, null, row(403, 403, 409, 403, 403));
        add("POST", "/api/v1/catalog/backups", "/api/v1/catalog/backups", null, null, row(403, 403, 409, 403, 403));
        add("POST", "/api/v1/catalog/backups/{id}/verify", "/api/v1/catalog/backups/1/verify", null, null, row(403, 403, 409, 403, 403));
        // GC
        add("GET", "/api/v1/gc/status", "/api/v1/gc/status", null, null, row(200, 200, 200, 403, 403));
        // GC jobs: started by an operator (202 and a job), never by a viewer or an agent
        add("POST", "/api/v1/gc/runs", "/api/v1/gc/runs", null, null, row(403, 202, 202, 403, 403));
        add("POST", "/api/v1/gc/fsck", "/api/v1/gc/fsck", null, null, row(403, 202, 202, 403, 403));
        add("POST", "/api/v1/gc/compactions", "/api/v1/gc/compactions", null, null, row(403, 202, 202, 403, 403));
        add("POST", "/api/v1/gc/reclaim", "/api/v1/gc/reclaim", null, null, row(403, 202, 202, 403, 403));
        // jobs: read by a viewer, cancelled by an operator
        add("GET", "/api/v1/jobs", "/api/v1/jobs", null, null, row(200, 200, 200, 403, 403));
        add("GET", "/api/v1/jobs/{id}", "/api/v1/jobs/999999", null, null, row(404, 404, 404, 403, 403));
        add("POST", "/api/v1/jobs/{id}/cancel", "/api/v1/jobs/999999/cancel", null, null, row(403, 404, 404, 403, 403));
        // retention policies: read by viewers, changed by operators; the simulator changes nothing, so viewers may run it
        add("GET", "/api/v1/retention/policies", "/api/v1/retention/policies", null, null, row(200, 200, 200, 403, 403));
        add("POST", "/api/v1/retention/policies", "/api/v1/retention/policies", null, "{}", row(403, 400, 400, 403, 403));
        add("GET", "/api/v1/retention/policies/{name}", "/api/v1/retention/policies/nope", null, null, row(404, 404, 404, 403, 403));
        add("PUT", "/api/v1/retention/policies/{name}", "/api/v1/retention/policies/nope", null, "{}", row(403, 400, 400, 403, 403));
        add("DELETE", "/api/v1/retention/policies/{name}", "/api/v1/retention/policies/nope", null, null,
                row(403, 404, 404, 403, 403));
        add("POST", "/api/v1/retention/simulate", "/api/v1/retention/simulate", null, "{}", row(400, 400, 400, 403, 403));
        // authentication: login is open (a stale token does not matter); the rest needs any principal
        add("POST", "/api/v1/auth/login", "/api/v1/auth/login", null, "{}", all(400));
        add("POST", "/api/v1/auth/logout", "/api/v1/auth/logout", null, null, row(204, 204, 204, 204, 204));
        add("GET", "/api/v1/auth/me", "/api/v1/auth/me", null, null, row(200, 200, 200, 200, 200));
        // users and tokens: admin only
        add("GET", "/api/v1/users", "/api/v1/users", null, null, row(403, 403, 200, 403, 403));
        add("POST", "/api/v1/users", "/api/v1/users", null, "{}", row(403, 403, 400, 403, 403));
        add("GET", "/api/v1/users/{name}", "/api/v1/users/nobody", null, null, row(403, 403, 404, 403, 403));
        add("PUT", "/api/v1/users/{name}", "/api/v1/users/nobody", null, "{}", row(403, 403, 400, 403, 403));
        add("DELETE", "/api/v1/users/{name}", "/api/v1/users/nobody", null, null, row(403, 403, 404, 403, 403));
        add("GET", "/api/v1/tokens", "/api/v1/tokens", null, null, row(403, 403, 200, 403, 403));
        add("POST", "/api/v1/tokens", "/api/v1/tokens", null, "{}", row(403, 403, 400, 403, 403));
        add("GET", "/api/v1/tokens/{id}", "/api/v1/tokens/0000000000000000", null, null, row(403, 403, 404, 403, 403));
        add("DELETE", "/api/v1/tokens/{id}", "/api/v1/tokens/0000000000000000", null, null, row(403, 403, 404, 403, 403));
        // the OpenAPI document and Swagger UI: open (they hold no data; Swagger UI loads before it has a token)
        add("GET", "/v3/api-docs", "/v3/api-docs", null, null, all(200));
        add("GET", "/v3/api-docs.yaml", "/v3/api-docs.yaml", null, null, all(200));
        add("GET", "/v3/api-docs/swagger-config", "/v3/api-docs/swagger-config", null, null, all(200));
        add("GET", "/swagger-ui.html", "/swagger-ui.html", null, null, all(302));
        // statistics: viewer and above; agents (addresses, token names): operator and above
        add("GET", "/api/v1/stats", "/api/v1/stats", null, null, row(200, 200, 200, 403, 403));
        add("GET", "/api/v1/stats/daily", "/api/v1/stats/daily", null, null, row(200, 200, 200, 403, 403));
        add("GET", "/api/v1/stats/history", "/api/v1/stats/history", null, null, row(200, 200, 200, 403, 403));
        add("GET", "/api/v1/backups", "/api/v1/backups", null, null, row(200, 200, 200, 403, 403));
        add("GET", "/api/v1/agents", "/api/v1/agents", null, null, row(403, 200, 200, 403, 403));
        // what an agent needs to reach the server (port, TLS, fingerprint): the console's command line, viewer and above
        add("GET", "/api/v1/server", "/api/v1/server", null, null, row(200, 200, 200, 403, 403));
        // verify: status for viewers and above; a pass started by an operator (an unknown volume: 404, no job)
        add("GET", "/api/v1/verify", "/api/v1/verify", null, null, row(200, 200, 200, 403, 403));
        add("POST", "/api/v1/verify", "/api/v1/verify", null, "{\"volume\":\"mx-none\"}", row(403, 404, 404, 403, 403));
        // the error page: reached directly it needs a principal and answers 404 (errors of other requests are always rendered)
        add("ANY", "/error", "/error", null, null, row(404, 404, 404, 404, 404));
        // a snapshot's raw image: data, so operator and above, or an agent within its scope; not a viewer
        add("GET", "/api/v1/volumes/{name}/snapshots/{snapshot}/image", "/api/v1/volumes/mx-a/snapshots/1/image",
                "/api/v1/volumes/mx-b/snapshots/1/image", null, row(403, 200, 200, 200, 404));
        // a download link for a browser: issued to operators and above; the download itself needs the link, not a header
        add("POST", "/api/v1/volumes/{name}/snapshots/{snapshot}/image/link", "/api/v1/volumes/mx-a/snapshots/1/image/link", null,
                null, row(403, 200, 200, 403, 403));
        add("GET", "/api/v1/volumes/{name}/snapshots/{snapshot}/image/download", "/api/v1/volumes/mx-a/snapshots/1/image/download",
                null, null, all(403));
        // master/worker mode: this node's role for viewers and above; the worker list only on a master (409 here, standalone)
        add("GET", "/api/v1/cluster", "/api/v1/cluster", null, null, row(200, 200, 200, 403, 403));
        add("GET", "/api/v1/cluster/workers", "/api/v1/cluster/workers", null, null, row(409, 409, 409, 403, 403));
        // removing a worker: admin only (409 not-a-master here, standalone)
        add("DELETE", "/api/v1/cluster/workers/{id}", "/api/v1/cluster/workers/1", null, null, row(403, 403, 409, 403, 403));
        // binding a worker to another worker token: admin only (an empty body is refused before the role of this node matters)
        add("PUT", "/api/v1/cluster/workers/{id}/token", "/api/v1/cluster/workers/1/token", null, "{}", row(403, 403, 400, 403, 403));
        // handing a lost worker to a new node: admin only (an empty body is refused before the role of this node matters)
        add("POST", "/api/v1/cluster/workers/{id}/replace", "/api/v1/cluster/workers/1/replace", null, "{}", row(403, 403, 400, 403, 403));
        // rebuilding a worker's dedup index: admin only (409 not-a-master here, standalone)
        add("POST", "/api/v1/cluster/workers/{id}/rebuild", "/api/v1/cluster/workers/1/rebuild", null, null, row(403, 403, 409, 403, 403));
        // resetting a worker's takeover fence: admin only (an empty body is refused before the role of this node matters)
        add("POST", "/api/v1/cluster/workers/{id}/takeover-fence/reset", "/api/v1/cluster/workers/1/takeover-fence/reset", null, "{}",
                row(403, 403, 400, 403, 403));
    }

    /** Endpoints outside the MVC handler mapping (actuator, static console): rows checked the same way. */
    private static final List<Row> EXTRA = List.of(
            new Row("GET", "/actuator/health", null, null, all(200)),
            new Row("GET", "/actuator/prometheus", null, null, row(200, 200, 200, 403, 403)),
            new Row("GET", "/actuator/info", null, null, row(200, 200, 200, 403, 403)),
            new Row("GET", "/actuator", null, null, row(200, 200, 200, 403, 403)),
            new Row("GET", "/", null, null, all(200)),
            new Row("GET", consoleScript(), null, null, all(200)),
            new Row("GET", "/no/such/page", null, null, row(404, 404, 404, 404, 404)));

    /** The console's script, whose name Vite makes from its content: found in the built index.html. */
    private static String consoleScript() {
        try (var in = AuthorizationMatrixTest.class.getResourceAsStream("/META-INF/resources/index.html")) {
            String html = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            var m = java.util.regex.Pattern.compile("\"(/console/[^\"]+\\.js)\"").matcher(html);
            if (!m.find()) {
                throw new IllegalStateException("the built console's index.html names no /console/*.js script");
            }
            return m.group(1);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    @Autowired
    ApplicationContext context;

    @Autowired
    IngestServer ingest;

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
    private final Map<Caller, String> credentials = new LinkedHashMap<>();

    @BeforeAll
    void setUp() throws Exception {
        byte[] img = new byte[8 * 4096];
        new Random(7).nextBytes(img);
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, org.holdfast.server.security.Role.AGENT))) {
            a.hello();
            a.backup("mx-a", img, 4096, true);
            a.backup("mx-b", img, 4096, true);
        }
        ApiTokens tokens = context.getBean(ApiTokens.class);
        credentials.put(Caller.MALFORMED, "not-a-token");
        String admin = TestTokens.issue(context, Role.ADMIN);
        credentials.put(Caller.WRONG, admin.substring(0, admin.length() - 4) + (admin.endsWith("AAAA") ? "BBBB" : "AAAA"));
        credentials.put(Caller.EXPIRED, TestTokens.issue(context, Role.ADMIN, VolumeScope.ALL, Duration.ofMillis(1)));
        String revoked = TestTokens.issue(context, Role.ADMIN);
        tokens.revoke(ApiTokens.idOf(revoked).orElseThrow(), "test", "local");
        credentials.put(Caller.REVOKED, revoked);
        credentials.put(Caller.VIEWER, TestTokens.issue(context, Role.VIEWER));
        credentials.put(Caller.OPERATOR, TestTokens.issue(context, Role.OPERATOR));
        credentials.put(Caller.ADMIN, admin);
        String agent = TestTokens.issue(context, Role.AGENT, new VolumeScope(List.of("mx-a*")), null);
        credentials.put(Caller.AGENT_IN, agent);
        credentials.put(Caller.AGENT_OUT, agent);
        Thread.sleep(5); // past the expired token's 1 ms
    }

    @Test
    void everyEndpoint_hasARow() {
        TreeSet<String> missing = new TreeSet<>();
        for (RequestMappingInfo info : mappings.getHandlerMethods().keySet()) {
            List<String> methods = info.getMethodsCondition().getMethods().isEmpty() ? List.of("ANY")
                    : info.getMethodsCondition().getMethods().stream().map(Enum::name).toList();
            for (String pattern : info.getPatternValues()) {
                for (String m : methods) {
                    if (!ROWS.containsKey(m + " " + pattern)) {
                        missing.add(m + " " + pattern);
                    }
                }
            }
        }
        assertThat(missing).as("endpoints without a row in the authorization matrix: add one").isEmpty();
    }

    @Test
    void everyEndpoint_answersTheExpectedStatusToEveryCaller() {
        List<String> wrong = new ArrayList<>();
        List<Row> rows = new ArrayList<>(ROWS.values());
        rows.addAll(EXTRA);
        for (Row r : rows) {
            for (Caller c : Caller.values()) {
                String path = c == Caller.AGENT_OUT && r.agentOutPath() != null ? r.agentOutPath() : r.path();
                HttpResponse<String> resp = call(r.method().equals("ANY") ? "GET" : r.method(), path, r.body(), credentials.get(c));
                int want = r.expected()[c.ordinal()];
                if (resp.statusCode() != want) {
                    wrong.add(r.method() + " " + path + " as " + c + ": " + resp.statusCode() + " (expected " + want + ") "
                            + abbreviate(resp.body()));
                }
                if (resp.statusCode() == 401 || resp.statusCode() == 403) {
                    checkProblem(resp, c, path, wrong);
                }
            }
        }
        assertThat(wrong).as("cells that differ from the matrix").isEmpty();
    }

    private void checkProblem(HttpResponse<String> resp, Caller c, String path, List<String> wrong) {
        try {
            JsonNode p = new ObjectMapper().readTree(resp.body());
            // the download through a link has no role to lack: a missing or bad link is its own problem
            String type = resp.statusCode() == 401 ? "urn:holdfast:problem:unauthenticated"
                    : path.endsWith("/image/download") ? "urn:holdfast:problem:invalid-download-link" : "urn:holdfast:problem:forbidden";
            if (!type.equals(p.path("type").asText()) || !resp.headers().firstValue("Content-Type").orElse("").contains("problem+json")) {
                wrong.add("not a problem detail of type " + type + ": " + resp.body());
            }
            String cred = credentials.get(c);
            // the whole credential, and for tokens their secret part, must not come back
            String secret = cred == null ? null : cred.startsWith("hft_") ? cred.substring(21) : cred;
            if (secret != null && resp.body().contains(secret)) {
                wrong.add("problem detail repeats the credential: " + resp.body());
            }
        } catch (IOException e) {
            wrong.add("not JSON: " + resp.body());
        }
    }

    @Test
    void volumes_agentToken_listsOnlyItsOwn() throws Exception {
        JsonNode agent = new ObjectMapper().readTree(call("GET", "/api/v1/volumes", null, credentials.get(Caller.AGENT_IN)).body());
        assertThat(agent.findValuesAsText("name")).containsExactly("mx-a");
        JsonNode viewer = new ObjectMapper().readTree(call("GET", "/api/v1/volumes", null, credentials.get(Caller.VIEWER)).body());
        assertThat(viewer.findValuesAsText("name")).contains("mx-a", "mx-b");
    }

    @Test
    void unauthenticated_detailSaysWhy() throws Exception {
        assertThat(detail(Caller.NONE)).contains("Authorization: Bearer");
        assertThat(detail(Caller.MALFORMED)).contains("malformed");
        assertThat(detail(Caller.WRONG)).contains("wrong secret for token");
        assertThat(detail(Caller.EXPIRED)).contains("expired");
        assertThat(detail(Caller.REVOKED)).contains("revoked");
    }

    private String detail(Caller c) throws IOException {
        HttpResponse<String> r = call("GET", "/api/v1/volumes", null, credentials.get(c));
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(r.headers().firstValue("WWW-Authenticate")).contains("Bearer realm=\"holdfast\"");
        return new ObjectMapper().readTree(r.body()).path("detail").asText();
    }

    private HttpResponse<String> call(String method, String path, String body, String token) {
        return RestCalls.call(http, port, method, path, body, token);
    }

    private static String abbreviate(String s) {
        return s == null ? "" : s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
