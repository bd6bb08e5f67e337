package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A store created with {@code holdfast.gc.bookkeeping=off}: nothing is counted, no GC cycle runs
 * even with a tiny interval and grace, every GC endpoint answers 409, every snapshot restores, and
 * starting the same data directory with bookkeeping on is refused.
 */
class GcBookkeepingOffTest {
    @TempDir
    Path data;

    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    private ConfigurableApplicationContext start(String mode) {
        // arguments, not default properties: application.yml would override those
        return new SpringApplicationBuilder(HoldfastServer.class).run(
                "--holdfast.data-dir=" + data,
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1",
                "--holdfast.ingest.port=0",
                "--holdfast.store.min-free-space=0",
                "--holdfast.gc.bookkeeping=" + mode,
                "--holdfast.tls.enabled=false", // plain HTTP and agent port; TLS is tested end to end
                "--holdfast.gc.interval=1s",
                "--holdfast.gc.grace=1ms",
                "--holdfast.gc.default-retention=1h",
                "--spring.main.banner-mode=off");
    }

    private HttpResponse<String> call(ConfigurableApplicationContext ctx, String method, String path) throws Exception {
        String port = ctx.getEnvironment().getProperty("local.server.port");
        String token = org.holdfast.server.api.TestTokens.issue(ctx, org.holdfast.server.security.Role.ADMIN);
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + token)
                .method(method, HttpRequest.BodyPublishers.noBody()).build();
        return http.send(r, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void offStore_neverCountsNorFrees_refusesGcEndpoints_andCannotBeStartedOn() throws Exception {
        List<byte[]> states = new ArrayList<>();
        try (ConfigurableApplicationContext ctx = start("off")) {
            IngestServer ingest = ctx.getBean(IngestServer.class);
            GcService gc = ctx.getBean(GcService.class);
            DataStore store = ctx.getBean(DataStore.class);
            byte[] img = new byte[64 * 4096];
            Random rnd = new Random(11);
            rnd.nextBytes(img);
            try (AgentDriver a = new AgentDriver(ingest.port(), org.holdfast.server.api.TestTokens.issue(ctx, org.holdfast.server.security.Role.AGENT))) {
                a.hello();
                for (int day = 0; day < 3; day++) {
                    // each day rewrites a quarter of the blocks: the old ones lose their references
                    byte[] change = new byte[16 * 4096];
                    rnd.nextBytes(change);
                    System.arraycopy(change, 0, img, (day % 4) * change.length, change.length);
                    a.backup("off-vol", img, 4096, true);
                    states.add(img.clone());
                }
            }
            long storedBlocks = store.nextPbn();
            // several cycle intervals (1 s) pass with a grace and a retention of 1 ms
            Thread.sleep(2500);
            for (String[] req : new String[][] {{"POST", "/api/v1/gc/runs"}, {"GET", "/api/v1/gc/status"},
                    {"POST", "/api/v1/gc/fsck"}, {"DELETE", "/api/v1/volumes/off-vol/snapshots/1"},
                    {"DELETE", "/api/v1/volumes/off-vol"}, {"PUT", "/api/v1/volumes/off-vol/snapshots/1/hold"}}) {
                HttpResponse<String> r = call(ctx, req[0], req[1]);
                assertThat(r.statusCode()).as(req[0] + " " + req[1] + ": " + r.body()).isEqualTo(409);
                JsonNode p = json.readTree(r.body());
                assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:gc-bookkeeping-off");
                assertThat(p.get("detail").asText()).contains("holdfast.gc.bookkeeping=off");
            }
            assertThat(gc.lastCycle()).as("no GC cycle may run on an off store").isNull();
            assertThat(gc.pipeline().updatesLogged()).as("nothing counted or protected").isZero();
            assertThat(store.nextPbn()).isEqualTo(storedBlocks);
            try (AgentDriver a = new AgentDriver(ingest.port(), org.holdfast.server.api.TestTokens.issue(ctx, org.holdfast.server.security.Role.AGENT))) {
                a.hello();
                for (int i = 0; i < states.size(); i++) {
                    assertThat(a.restore("off-vol", i + 1).image()).as("snapshot " + (i + 1)).isEqualTo(states.get(i));
                }
            }
        }
        assertThatThrownBy(() -> start("on").close())
                .hasRootCauseInstanceOf(GcBookkeepingMode.GcModeMismatchException.class)
                .rootCause().hasMessageContaining("created with holdfast.gc.bookkeeping=off")
                .hasMessageContaining(data.toString());
        // the refused start changed nothing: the store still starts off and restores
        try (ConfigurableApplicationContext ctx = start("off");
             AgentDriver a = new AgentDriver(ctx.getBean(IngestServer.class).port(),
                     org.holdfast.server.api.TestTokens.issue(ctx, org.holdfast.server.security.Role.AGENT))) {
            a.hello();
            assertThat(a.restore("off-vol", 3).image()).isEqualTo(states.get(2));
        }
    }
}
