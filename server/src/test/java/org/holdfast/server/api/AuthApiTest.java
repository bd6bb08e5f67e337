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
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.security.InitialAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/** Login, sessions, users and tokens over real HTTP, on a server started on an empty data directory. */
@ExtendWith(OutputCaptureExtension.class)
class AuthApiTest {
    @TempDir
    Path data;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();
    private int port;

    /**
     * The server of the tests that need no settings of their own and change nothing another asserts
     * (tokens, the last admin): a context start costs seconds on a loaded machine.
     */
    private static ConfigurableApplicationContext plain;
    @TempDir
    static Path plainData;

    @AfterAll
    static void closePlain() {
        if (plain != null) {
            plain.close();
        }
    }

    /** The shared plain server, started by the first test that asks. */
    private ConfigurableApplicationContext plain() {
        if (plain == null) {
            plain = start(plainData);
        }
        port = Integer.parseInt(plain.getEnvironment().getProperty("local.server.port"));
        return plain;
    }

    private ConfigurableApplicationContext start(String... extra) {
        return start(data, extra);
    }

    private ConfigurableApplicationContext start(Path dir, String... extra) {
        String[] args = {
                "--holdfast.data-dir=" + dir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.tls.enabled=false", // plain HTTP; TLS is tested end to end
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--spring.main.banner-mode=off"};
        String[] all = java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.Arrays.stream(extra)).toArray(String[]::new);
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(HoldfastServer.class).run(all);
        port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
        return ctx;
    }

    @Test
    void firstStart_writesAdminPasswordFile0600_neverLogsThePassword(CapturedOutput output) throws Exception {
        String password;
        try (ConfigurableApplicationContext ctx = start()) {
            Path file = data.resolve(InitialAdmin.FILE);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            password = Files.readString(file).strip();
            HttpResponse<String> login = call("POST", "/api/v1/auth/login", "{\"username\":\"admin\",\"password\":\"" + password + "\"}", null);
            assertThat(login.statusCode()).isEqualTo(200);
            assertThat(json.readTree(login.body()).get("role").asText()).isEqualTo("admin");
        }
        assertThat(output.getAll()).contains(data.resolve(InitialAdmin.FILE).toString()).doesNotContain(password);
        // a second start keeps the password: users exist
        try (ConfigurableApplicationContext ctx = start()) {
            assertThat(Files.readString(data.resolve(InitialAdmin.FILE)).strip()).isEqualTo(password);
            assertThat(call("POST", "/api/v1/auth/login", "{\"username\":\"admin\",\"password\":\"" + password + "\"}", null).statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void login_wrongPassword_401ThenThrottled429WithRetryAfter_logoutEndsSession(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext ctx = start("--holdfast.security.failed-logins-per-minute=3")) {
            String password = Files.readString(data.resolve(InitialAdmin.FILE)).strip();
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = call("POST", "/api/v1/auth/login", "{\"username\":\"admin\",\"password\":\"guess-" + i + "\"}", null);
                assertThat(r.statusCode()).isEqualTo(401);
                JsonNode p = json.readTree(r.body());
                assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:unauthenticated");
                assertThat(p.get("detail").asText()).isEqualTo("wrong username or password");
            }
            HttpResponse<String> throttled = call("POST", "/api/v1/auth/login",
                    "{\"username\":\"admin\",\"password\":\"" + password + "\"}", null);
            assertThat(throttled.statusCode()).isEqualTo(429);
            assertThat(json.readTree(throttled.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:too-many-logins");
            long retry = Long.parseLong(throttled.headers().firstValue("Retry-After").orElseThrow());
            assertThat(retry).isBetween(1L, 60L);
            assertThat(output.getAll()).doesNotContain("guess-0").doesNotContain(password);

            // the address (127.0.0.1) is throttled now too, so the session checks below run after a restart
            String admin = TestTokens.issue(ctx, org.holdfast.server.security.Role.ADMIN);
            assertThat(call("POST", "/api/v1/users", "{\"name\":\"olga\",\"role\":\"operator\",\"password\":\"olga-password-1\"}", admin)
                    .statusCode()).isEqualTo(201);
        }
        // the first session's steps must end before its fixed expiry: with the wait for the GC run among them they took
        // 6 s at load 49, past the 2 s this timeout was; now the run is awaited after the logout (the job needs no session),
        // and the second session is opened with the first, so its expiry (checked last) runs out meanwhile
        try (ConfigurableApplicationContext ctx = start("--holdfast.security.session-timeout=4s")) {
            HttpResponse<String> login = call("POST", "/api/v1/auth/login", "{\"username\":\"olga\",\"password\":\"olga-password-1\"}", null);
            assertThat(login.statusCode()).as(login.body()).isEqualTo(200);
            JsonNode s = json.readTree(login.body());
            String session = s.get("token").asText();
            assertThat(session).startsWith("hfs_");
            assertThat(s.get("username").asText()).isEqualTo("olga");
            assertThat(s.get("role").asText()).isEqualTo("operator");
            assertThat(s.get("expiresAt").asText()).isNotEmpty();
            JsonNode secondLogin = json.readTree(call("POST", "/api/v1/auth/login",
                    "{\"username\":\"olga\",\"password\":\"olga-password-1\"}", null).body());
            String second = secondLogin.get("token").asText();
            assertThat(call("GET", "/api/v1/auth/me", null, second).statusCode()).isEqualTo(200);
            JsonNode me = json.readTree(call("GET", "/api/v1/auth/me", null, session).body());
            assertThat(me.get("principal").asText()).isEqualTo("user:olga");
            assertThat(me.get("kind").asText()).isEqualTo("user");
            HttpResponse<String> run = call("POST", "/api/v1/gc/runs", null, session);
            assertThat(run.statusCode()).as(run.body()).isEqualTo(202);
            String location = run.headers().firstValue("Location").orElseThrow();
            assertThat(call("GET", "/api/v1/users", null, session).statusCode()).isEqualTo(403);
            assertThat(call("POST", "/api/v1/auth/logout", null, session).statusCode()).isEqualTo(204);
            assertThat(call("GET", "/api/v1/auth/me", null, session).statusCode()).isEqualTo(401);
            String admin = TestTokens.issue(ctx, org.holdfast.server.security.Role.ADMIN);
            JobPolling.awaitResult(path -> call("GET", path, null, admin).body(), location); // the session's GC run ran

            long expiresAt = java.time.Instant.parse(secondLogin.get("expiresAt").asText()).toEpochMilli();
            Thread.sleep(Math.max(0, expiresAt - System.currentTimeMillis()) + 100);
            HttpResponse<String> expired = call("GET", "/api/v1/auth/me", null, second);
            assertThat(expired.statusCode()).isEqualTo(401);
            assertThat(json.readTree(expired.body()).get("detail").asText()).contains("expired");
        }
    }

    @Test
    void tokens_secretShownOnce_listedWithoutSecret_revokedRefusedAtOnce() throws Exception {
        ConfigurableApplicationContext ctx = plain();
        String admin = TestTokens.issue(ctx, org.holdfast.server.security.Role.ADMIN);
        HttpResponse<String> created = call("POST", "/api/v1/tokens",
                "{\"name\":\"db host\",\"role\":\"agent\",\"volumes\":[\"db-*\"],\"expiresIn\":\"30d\"}", admin);
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        JsonNode c = json.readTree(created.body());
        String token = c.get("token").asText();
        String id = c.get("info").get("id").asText();
        assertThat(token).startsWith("hft_" + id + "_");
        assertThat(c.get("info").get("volumes").get(0).asText()).isEqualTo("db-*");
        assertThat(c.get("info").get("expiresAt").asText()).isNotEmpty();
        String secret = token.substring(21);

        HttpResponse<String> list = call("GET", "/api/v1/tokens", null, admin);
        assertThat(list.body()).contains(id).doesNotContain(secret);
        HttpResponse<String> one = call("GET", "/api/v1/tokens/" + id, null, admin);
        assertThat(one.body()).contains("\"state\":\"active\"").doesNotContain(secret);

        assertThat(call("GET", "/api/v1/volumes", null, token).statusCode()).isEqualTo(200);
        assertThat(call("DELETE", "/api/v1/tokens/" + id, null, admin).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = call("GET", "/api/v1/volumes", null, token);
        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(refused.body()).contains("revoked").doesNotContain(secret);
        assertThat(call("GET", "/api/v1/tokens/" + id, null, admin).body()).contains("\"state\":\"revoked\"");

        HttpResponse<String> bad = call("POST", "/api/v1/tokens", "{\"name\":\"x\",\"role\":\"boss\"}", admin);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json.readTree(bad.body()).get("detail").asText()).contains("unknown role");
        HttpResponse<String> forever = call("POST", "/api/v1/tokens",
                "{\"name\":\"x\",\"role\":\"viewer\",\"expiresIn\":\"99999999999999d\"}", admin);
        assertThat(forever.statusCode()).as("an expiry that overflows is a bad request, not a 500").isEqualTo(400);
        assertThat(json.readTree(forever.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");
    }

    @Test
    void login_failuresForManyUsersEachOnANewConnection_addressThrottled429() throws Exception {
        try (ConfigurableApplicationContext ctx = start("--holdfast.security.failed-logins-per-minute=3")) {
            String password = Files.readString(data.resolve(InitialAdmin.FILE)).strip();
            // a password sprayer: one guess per user name, each on a new connection (a new source port)
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = callOnNewConnection("/api/v1/auth/login",
                        "{\"username\":\"sprayed-" + i + "\",\"password\":\"guess-" + i + "\"}");
                assertThat(r.statusCode()).isEqualTo(401);
            }
            HttpResponse<String> admin = callOnNewConnection("/api/v1/auth/login",
                    "{\"username\":\"admin\",\"password\":\"" + password + "\"}");
            assertThat(admin.statusCode()).as("127.0.0.1 used up its failures, whatever the port").isEqualTo(429);
            assertThat(json.readTree(admin.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:too-many-logins");
        }
    }

    @Test
    void users_lastAdminCannotBeDeletedOrDemoted_409() throws Exception {
        ConfigurableApplicationContext ctx = plain();
        String admin = TestTokens.issue(ctx, org.holdfast.server.security.Role.ADMIN);
        HttpResponse<String> del = call("DELETE", "/api/v1/users/admin", null, admin);
        assertThat(del.statusCode()).isEqualTo(409);
        assertThat(json.readTree(del.body()).get("type").asText()).isEqualTo("urn:holdfast:problem:credential-conflict");
        assertThat(call("PUT", "/api/v1/users/admin", "{\"role\":\"viewer\"}", admin).statusCode()).isEqualTo(409);
        assertThat(call("GET", "/api/v1/users/admin", null, admin).body()).contains("\"role\":\"admin\"").doesNotContain("bcrypt");
        assertThat(call("POST", "/api/v1/users", "{\"name\":\"viv\",\"role\":\"viewer\",\"password\":\"short\"}", admin).statusCode())
                .isEqualTo(400);
        assertThat(call("GET", "/api/v1/users/viv", null, admin).statusCode()).isEqualTo(404);
        // the first password's file stays through those refusals, and goes once the admin's password changes
        assertThat(plainData.resolve(InitialAdmin.FILE)).exists();
        assertThat(call("PUT", "/api/v1/users/admin", "{\"password\":\"an admin password of my own\"}", admin).statusCode())
                .isEqualTo(200);
        assertThat(plainData.resolve(InitialAdmin.FILE)).as("holds a password that opens nothing any more").doesNotExist();
    }

    /** A POST from a client of its own, so from a new connection and source port. */
    private HttpResponse<String> callOnNewConnection(String path, String body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> call(String method, String path, String body, String token) {
        return RestCalls.call(http, port, method, path, body, token);
    }
}
