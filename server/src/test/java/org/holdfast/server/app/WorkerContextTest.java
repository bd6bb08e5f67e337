package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.stats.Statistics;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.verify.VerifyJobs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A worker's Spring context opens only what it serves (issue 18): a master and a worker in this JVM
 * (TLS off; TLS on the cluster port: ClusterProcessTest). The worker has no data store, catalog,
 * standalone engine, agent port, GC, jobs, verify or statistics, and none of their files are in its
 * data directory; it registers with the master, its health, metrics, cluster view and tokens answer,
 * and the endpoints over what it lacks answer 409 {@code not-on-a-worker} naming the master.
 */
class WorkerContextTest {
    @TempDir
    static Path data;
    private static ConfigurableApplicationContext master;
    private static ConfigurableApplicationContext worker;
    private static String masterCluster;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void start() throws Exception {
        master = new SpringApplicationBuilder(HoldfastServer.class).run(common(data.resolve("master"),
                "--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=0",
                "--holdfast.cluster.heartbeat-interval=200ms"));
        masterCluster = "127.0.0.1:" + master.getBean(ClusterServer.class).port();
        String token = master.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("workers", Role.WORKER, VolumeScope.ALL, null, null),
                "test", "local").token();
        Path tokenFile = Files.writeString(data.resolve("worker.token"), token + "\n");
        worker = new SpringApplicationBuilder(HoldfastServer.class).run(common(data.resolve("worker"),
                "--holdfast.cluster.role=worker", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.master=" + masterCluster,
                "--holdfast.cluster.token-file=" + tokenFile, "--holdfast.store.s3.node=lean-1"));
    }

    private static String[] common(Path dir, String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("--holdfast.data-dir=" + dir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.tls.enabled=false",
                "--holdfast.store.min-free-space=0", "--spring.main.banner-mode=off"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    @AfterAll
    static void stop() {
        if (worker != null) {
            worker.close();
        }
        if (master != null) {
            master.close();
        }
    }

    private static HttpResponse<String> call(String method, String path, String token) throws Exception {
        int port = Integer.parseInt(worker.getEnvironment().getProperty("local.server.port"));
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (method.equals("POST")) {
            b.header("Content-Type", "application/json");
        }
        return HTTP.send(b.method(method, method.equals("POST") ? HttpRequest.BodyPublishers.ofString("{\"name\":\"vm-1\"}")
                : HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void worker_opensNoneOfTheStandaloneAppliance_neitherBeansNorFiles() {
        for (Class<?> absent : List.of(FingerprintIndex.class, DataStore.class, Catalog.class, SnapshotCommit.class, IngestServer.class,
                GcService.class, Jobs.class, VerifyJobs.class, Statistics.class, WorkerRegistry.class)) {
            assertThat(worker.getBeanProvider(absent).getIfAvailable()).as("%s on a worker", absent.getSimpleName()).isNull();
        }
        assertThat(worker.getBean(LazyDedupWorker.class)).isNotNull();
        assertThat(master.getBean(FingerprintIndex.class)).as("the master keeps its engine").isNotNull();
        Path dir = data.resolve("worker");
        for (String standalone : List.of("sungem", "containers", "gc", "data", "session-spill")) {
            assertThat(dir.resolve(standalone)).as("%s in the worker's data directory", standalone).doesNotExist();
            assertThat(data.resolve("master").resolve(standalone)).as("%s in the master's", standalone).exists();
        }
        assertThat(dir.resolve("catalog")).as("users, tokens and audit stay").isDirectory();
    }

    @Test
    void worker_registersAndAnswersHealthMetricsAndItsClusterView() throws Exception {
        await().atMost(Duration.ofSeconds(30)).until(() -> worker.getBean(WorkerConnector.class).status().connected());
        String viewer = TestTokens.issue(worker, Role.VIEWER);
        HttpResponse<String> health = call("GET", "/actuator/health", null);
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        assertThat(JSON.readTree(health.body()).get("status").asText()).isEqualTo("UP");
        assertThat(worker.containsBean("catalogHealthIndicator")).isTrue();
        assertThat(worker.containsBean("diskSpaceHealthIndicator")).isTrue();
        assertThat(worker.containsBean("gcHealthIndicator")).as("no GC on a worker").isFalse();
        assertThat(worker.containsBean("integrityHealthIndicator")).as("no blocks to verify").isFalse();
        HttpResponse<String> self = call("GET", "/api/v1/cluster", viewer);
        assertThat(self.statusCode()).as(self.body()).isEqualTo(200);
        assertThat(JSON.readTree(self.body()).get("role").asText()).isEqualTo("worker");
        assertThat(JSON.readTree(self.body()).get("registration").get("connected").asBoolean()).isTrue();
        HttpResponse<String> metrics = call("GET", "/actuator/prometheus", viewer);
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("holdfast_cluster_registered 1.0").contains("disk_free_bytes")
                .doesNotContain("holdfast_gc_").doesNotContain("holdfast_ingest_");
        assertThat(call("GET", "/api/v1/tokens", TestTokens.issue(worker, Role.ADMIN)).statusCode()).isEqualTo(200);
    }

    @Test
    void worker_endpointsOverWhatItLacks_answerNotOnAWorker_afterAuthentication() throws Exception {
        String operator = TestTokens.issue(worker, Role.OPERATOR);
        for (String[] call : new String[][] {{"GET", "/api/v1/volumes"}, {"POST", "/api/v1/volumes"}, {"GET", "/api/v1/server"},
                {"GET", "/api/v1/jobs"}, {"POST", "/api/v1/gc/runs"}, {"GET", "/api/v1/stats"}, {"GET", "/api/v1/agents"}}) {
            HttpResponse<String> r = call(call[0], call[1], operator);
            assertThat(r.statusCode()).as("%s %s: %s", call[0], call[1], r.body()).isEqualTo(409);
            JsonNode p = JSON.readTree(r.body());
            assertThat(p.get("type").asText()).isEqualTo("urn:holdfast:problem:not-on-a-worker");
            assertThat(p.get("detail").asText()).contains("this node is a worker").contains(masterCluster);
            assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
        }
        assertThat(call("GET", "/api/v1/volumes", null).statusCode()).as("no token").isEqualTo(401);
        assertThat(Files.exists(data.resolve("worker").resolve("data"))).as("the refused create stored nothing").isFalse();
    }
}
