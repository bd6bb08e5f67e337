package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Errors Spring MVC, Spring Security and the servlet container produce themselves are RFC 9457
 * problem details with a stable type, through real HTTP requests on a real port (so the
 * container's {@code /error} dispatch is exercised too), and a refused write changes nothing.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
class ApiErrorsTest {
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-errors-test");
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
    GcService gc;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final ObjectMapper json = new ObjectMapper();
    private String admin;

    @BeforeEach
    void token() {
        admin = TestTokens.issue(context, Role.ADMIN);
    }

    private HttpResponse<String> send(HttpRequest.Builder b) {
        try {
            return http.send(b.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + admin);
    }

    /** Asserts status, problem+json and type; returns the problem. */
    private JsonNode problem(HttpResponse<String> r, int status, String type) throws IOException {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).as(r.body()).startsWith("application/problem+json");
        JsonNode p = json.readTree(r.body());
        assertThat(p.path("type").asText()).as(r.body()).isEqualTo(type);
        assertThat(p.path("status").asInt()).isEqualTo(status);
        assertThat(p.path("title").asText()).isNotBlank();
        assertThat(p.path("detail").asText()).isNotBlank();
        return p;
    }

    @Test
    void get_unknownApiPath_notFoundProblem() throws Exception {
        JsonNode p = problem(send(request("/api/v1/no-such-resource")), 404, "urn:holdfast:problem:not-found");
        assertThat(p.path("detail").asText()).contains("/api/v1/no-such-resource");
    }

    @Test
    void get_unknownPathOutsideTheApi_notFoundProblem() throws Exception {
        problem(send(request("/no/such/page.html")), 404, "urn:holdfast:problem:not-found");
    }

    @Test
    void get_unknownApiPathWithoutToken_unauthenticatedProblem() throws Exception {
        problem(send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/no-such-resource"))), 401,
                "urn:holdfast:problem:unauthenticated");
    }

    @Test
    void patch_onAGetOnlyPath_methodNotAllowedWithAllow() throws Exception {
        HttpResponse<String> r = send(request("/api/v1/volumes").method("PATCH", HttpRequest.BodyPublishers.ofString("{}"))
                .header("Content-Type", "application/json"));
        problem(r, 405, "urn:holdfast:problem:method-not-allowed");
        assertThat(r.headers().firstValue("Allow").orElse("")).contains("GET");
    }

    @Test
    void get_acceptXmlOnly_notAcceptableProblem() throws Exception {
        problem(send(request("/api/v1/volumes").header("Accept", "application/xml")), 406, "urn:holdfast:problem:not-acceptable");
    }

    @Test
    void put_textPlainBody_unsupportedMediaTypeProblem() throws Exception {
        HttpResponse<String> r = send(request("/api/v1/volumes/errs-vol/retention")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"policy\":\"7d\"}")).header("Content-Type", "text/plain"));
        JsonNode p = problem(r, 415, "urn:holdfast:problem:unsupported-media-type");
        // the detail names the header to send (curl -d without -H sends a form type)
        assertThat(p.path("detail").asText()).contains("Content-Type 'text/plain").contains("'Content-Type: application/json'");
    }

    @Test
    void put_bodyOverOneMiBWithLength_payloadTooLarge() throws Exception {
        byte[] body = bigPolicy(RequestBodyLimit.MAX_BYTES + 1000);
        HttpResponse<String> r = send(request("/api/v1/volumes/errs-vol/retention")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).header("Content-Type", "application/json"));
        JsonNode p = problem(r, 413, "urn:holdfast:problem:payload-too-large");
        assertThat(p.path("detail").asText()).contains("1048576");
    }

    @Test
    void put_chunkedBodyOverOneMiB_payloadTooLarge() throws Exception {
        byte[] body = bigPolicy(RequestBodyLimit.MAX_BYTES + 1000);
        // ofInputStream has no length: the body goes chunked, so only counting while reading can stop it
        HttpResponse<String> r = send(request("/api/v1/volumes/errs-vol/retention")
                .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
                .header("Content-Type", "application/json"));
        problem(r, 413, "urn:holdfast:problem:payload-too-large");
    }

    @Test
    void put_chunkedBodyUnderTheLimit_stillRead() throws Exception {
        byte[] body = "{\"policy\": 12".getBytes(StandardCharsets.UTF_8); // read through the counting stream, then refused as JSON
        HttpResponse<String> r = send(request("/api/v1/volumes/errs-vol/retention")
                .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
                .header("Content-Type", "application/json"));
        problem(r, 400, "urn:holdfast:problem:invalid-request");
    }

    @Test
    void get_pathWithSemicolon_firewallRefusalIsABadRequestProblem() throws Exception {
        problem(send(request("/api/v1/volumes/a;b=c")), 400, "urn:holdfast:problem:invalid-request");
    }

    @Test
    void get_errorPageDirectly_notFoundProblem() throws Exception {
        problem(send(request("/error")), 404, "urn:holdfast:problem:not-found");
    }

    @Test
    void get_wrongTypeInQuery_invalidRequestProblem() throws Exception {
        problem(send(request("/api/v1/volumes?offset=abc")), 400, "urn:holdfast:problem:invalid-request");
        problem(send(request("/api/v1/stats/daily?from=yesterday")), 400, "urn:holdfast:problem:invalid-request");
    }

    @Test
    void requests_claimingMultipartWithoutBoundary_noServerError() throws Exception {
        // found by the schema fuzz: the multipart resolver failed these with 500 before any handler ran
        HttpResponse<String> get = send(request("/api/v1/volumes").header("Content-Type", "multipart/form-data"));
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        problem(send(request("/api/v1/volumes/errs-vol/retention").PUT(HttpRequest.BodyPublishers.ofString("x"))
                .header("Content-Type", "multipart/form-data")), 415, "urn:holdfast:problem:unsupported-media-type");
    }

    @Test
    void rawRequests_urlsTheContainerOrFirewallRefuse_problemDetails() throws Exception {
        for (String path : new String[] {"/api/v1/volumes/a%2Fb", "/api/v1/volumes/%zz", "/api/v1/volumes/a%00b",
                "/api/v1/volumes/..%2F..%2Fetc", "/api/v1/volumes/a\\b"}) {
            String answer = raw("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + admin
                    + "\r\nConnection: close\r\n\r\n");
            String head = answer.substring(0, Math.max(0, answer.indexOf("\r\n\r\n")));
            assertThat(head).as(path + ": " + answer).matches("(?s)HTTP/1.1 4\\d\\d .*");
            assertThat(head.toLowerCase()).as(path + ": " + answer).contains("content-type: application/problem+json");
            assertThat(answer).as(path).contains("\"type\":\"urn:holdfast:problem:");
        }
    }

    /** Sends {@code request} as is over a socket and answers everything the server sent. */
    private String raw(String request) throws IOException {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    /** {"policy": "aaaa..."} of about {@code size} bytes. */
    private static byte[] bigPolicy(long size) {
        return ("{\"policy\": \"" + "a".repeat((int) size) + "\"}").getBytes(StandardCharsets.UTF_8);
    }
}
