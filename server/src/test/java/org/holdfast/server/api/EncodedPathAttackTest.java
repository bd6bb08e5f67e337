package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.catalog.AuditStore;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
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
 * An agent token scoped to {@code sc-a*} tries to read volume {@code sc-b} over REST by spelling the
 * path so that the URL rules and the handler see a volume route while the scope check might not:
 * percent-encoded letters anywhere in the path, encoded volume names, case, trailing dots and
 * slashes, dot segments, doubled slashes and snapshot ids of the other volume. Every attempt must
 * answer what a volume that does not exist answers (or a refusal), never sc-b's data or metadata.
 * And an operator's change through such a path must be audited with the volume it changed, as if
 * the path had been spelled plainly: an audit trail without the target hides who changed what.
 * The console page, however spelled, keeps its Content-Security-Policy.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EncodedPathAttackTest {
    private static final Path DATA;
    private static final int BS = 4096;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-scope-attack");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry r) {
        PlainServerProperties.add(r, DATA);
    }

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @Autowired
    IngestServer ingest;

    private final HttpClient http = HttpClient.newHttpClient();
    private String agent;

    @BeforeAll
    void backUp() {
        Random rnd = new Random(31);
        byte[] mine = new byte[8 * BS];
        rnd.nextBytes(mine);
        byte[] secret = new byte[8 * BS];
        rnd.nextBytes(secret);
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, Role.AGENT))) {
            a.hello();
            a.backup("sc-a", mine, BS, false);
            a.backup("sc-b", secret, BS, false);
        }
        agent = TestTokens.issue(context, Role.AGENT, new VolumeScope(List.of("sc-a*")), null);
    }

    /** Paths that name sc-b, each spelled to slip past a check that reads the raw request URI. */
    private static List<String> disguisedPaths(String tail) {
        return List.of(
                "/api/v1/%76olumes/sc-b" + tail,          // 'v' percent-encoded
                "/api/v1/volume%73/sc-b" + tail,          // 's'
                "/api/v%31/volumes/sc-b" + tail,          // '1'
                "/%61pi/v1/volumes/sc-b" + tail,          // 'a'
                "/api/v1/volumes/sc-%62" + tail,          // the volume name itself
                "/api/v1/volumes/%73%63%2d%62" + tail,    // all of it
                "/API/v1/volumes/sc-b" + tail,
                "/api/v1/Volumes/sc-b" + tail,
                "/api/v1/volumes/SC-B" + tail,
                "/api/v1/volumes/sc-b." + tail,
                "/api/v1/volumes/sc-a/../sc-b" + tail,
                "/api/v1/volumes/sc-a/%2e%2e/sc-b" + tail,
                "/api/v1/volumes/sc-a%2f..%2fsc-b" + tail,
                "/api/v1/volumes/sc-a%252f..%252fsc-b" + tail,
                "/api/v1/volumes//sc-b" + tail,
                "//api/v1/volumes/sc-b" + tail,
                "/api/v1/volumes/sc-b;x=1" + tail,
                "/api/v1/volumes/sc-a;/../sc-b" + tail,
                "/api/v1/volumes/sc-b" + tail + "/");
    }

    @Test
    void agentToken_disguisedPathsToAnotherVolume_neverItsDataOrMetadata() {
        List<String> leaks = new ArrayList<>();
        for (String tail : List.of("", "/snapshots", "/snapshots/1", "/snapshots/sc-b@1", "/snapshots/1/image",
                "/snapshots/1/hold", "/snapshots/1/lock", "/retention")) {
            for (String path : disguisedPaths(tail)) {
                HttpResponse<String> r = RestCalls.call(http, port, "GET", path, null, agent);
                if (r.statusCode() < 400) {
                    leaks.add("GET " + path + " -> " + r.statusCode() + " " + abbreviate(r.body()));
                }
            }
        }
        assertThat(leaks).as("answers that gave the sc-a agent something of sc-b").isEmpty();
    }

    @Test
    void agentToken_otherVolumesSnapshotIdUnderItsOwnVolume_refusedWithoutNamingIt() {
        for (String tail : List.of("/snapshots/sc-b@1", "/snapshots/sc-b@1/image", "/snapshots/sc-b@1/hold")) {
            HttpResponse<String> r = RestCalls.call(http, port, "GET", "/api/v1/volumes/sc-a" + tail, null, agent);
            assertThat(r.statusCode()).as(tail).isIn(400, 404);
        }
    }

    @Test
    void agentToken_ownVolume_stillServed() {
        // the attack paths above are refused because of the scope, not because this agent can read nothing
        assertThat(RestCalls.call(http, port, "GET", "/api/v1/volumes/sc-a/snapshots/1", null, agent).statusCode()).isEqualTo(200);
        assertThat(RestCalls.call(http, port, "GET", "/api/v1/volumes/sc-b/snapshots/1", null, agent).statusCode()).isEqualTo(404);
    }

    @Test
    void operatorChange_throughEncodedPath_auditedWithItsVolumeLikeAPlainOne() throws InterruptedException {
        String operator = TestTokens.issue(context, Role.OPERATOR);
        AuditStore audit = context.getBean(AuditStore.class);
        for (String path : List.of("/api/v1/%76olumes/sc-a/snapshots/1/hold", "/%61pi/v1/volume%73/sc-a/snapshots/sc-a@1/hold",
                "/api/v1/volumes/sc-a/snapshots/1/hold")) {
            Thread.sleep(2); // the previous entry's millisecond is over: the query below sees only this call's
            long before = System.currentTimeMillis();
            assertThat(RestCalls.call(http, port, "PUT", path, null, operator).statusCode()).as(path).isEqualTo(200);
            List<AuditStore.Entry> placed = List.of();
            for (long end = before + 5000; placed.isEmpty() && System.currentTimeMillis() < end; Thread.sleep(10)) {
                // the entry is written once the answer has gone out
                placed = audit.query(new AuditStore.Query(before, null, null, "hold.place", null, null, 10, null)).entries();
            }
            assertThat(placed).as(path).hasSize(1);
            assertThat(placed.get(0).event().target()).as("audit target of PUT " + path).isEqualTo("volume:sc-a@1");
        }
    }

    @Test
    void consolePage_throughEncodedPath_stillUnderItsContentSecurityPolicy() {
        assertThat(RestCalls.call(http, port, "GET", "/index.html", null, null).statusCode()).isEqualTo(200);
        for (String path : List.of("/index.html", "/%69ndex.html", "/index%2ehtml", "/%69%6e%64%65%78.html")) {
            HttpResponse<String> r = RestCalls.call(http, port, "GET", path, null, null);
            if (r.statusCode() == 200) {
                assertThat(r.headers().firstValue("Content-Security-Policy")).as(path).contains(ConsoleHeaders.POLICY);
                assertThat(r.headers().firstValue("Cache-Control")).as(path).contains("no-store");
            } else {
                assertThat(r.statusCode()).as(path).isIn(400, 401, 404);
            }
        }
    }

    private static String abbreviate(String s) {
        return s == null ? "" : s.length() > 160 ? s.substring(0, 160) + "..." : s;
    }
}
