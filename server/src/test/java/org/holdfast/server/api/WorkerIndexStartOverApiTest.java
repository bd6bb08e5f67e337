package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker that starts its dedup index over says so: a worker node in this JVM (its index on disk,
 * a real link to the master's cluster port) whose owner file names an older epoch than the one
 * before (a registration whose REGISTERED it never recorded) starts over at its next registration;
 * the master lists {@code indexStartedOver} with the reason and audits it, until a rebuild of that
 * worker's index finishes. A new worker with nothing on disk reports nothing.
 */
class WorkerIndexStartOverApiTest {
    @TempDir
    static Path data;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static ClusterDedupMaster master;

    @BeforeAll
    static void start() {
        master = new ClusterDedupMaster(data.resolve("master"));
    }

    @AfterAll
    static void stop() {
        if (master != null) {
            master.close();
        }
    }

    private static HttpResponse<String> call(String method, String path, String token) {
        return master.call(method, path, token);
    }

    private static JsonNode worker1(String token) throws Exception {
        return JSON.readTree(call("GET", "/api/v1/cluster/workers", token).body()).get(0);
    }

    /** Node w-one's engine, its index in {@code index}, opened on the master's first call. */
    private static LazyDedupWorker engine(Path index) {
        return new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index, SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC()));
    }

    /** Node w-one connected to the master with {@code engine}. */
    private static WorkerConnector connect(Path tokenFile, LazyDedupWorker engine) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.clusterPort(),
                "127.0.0.1", "w-one", tokenFile, (MasterTrust) null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                Duration.ofMillis(200)), new LoadProbe(data), engine);
        w.start();
        await().atMost(Duration.ofSeconds(15)).until(() -> w.status().connected());
        return w;
    }

    /** Registers node w-one with its index in {@code index}, waits for the master's first index report, and disconnects. */
    private static JsonNode registerOnce(Path index, Path tokenFile, String admin) throws Exception {
        LazyDedupWorker lazy = engine(index);
        WorkerConnector w = connect(tokenFile, lazy);
        try {
            long epoch = w.status().assignment().epoch();
            return await().atMost(Duration.ofSeconds(10)).until(() -> worker1(admin),
                    n -> n.get("epoch").asLong() == epoch && !n.get("indexEntries").isNull());
        } finally {
            w.close();
            lazy.close();
            await().atMost(Duration.ofSeconds(15)).until(() -> worker1(admin).get("state").asText().equals("lost"));
        }
    }

    @Test
    void register_ownerFileOfAnOlderEpoch_startsOverAndTheMasterShowsItUntilARebuild() throws Exception {
        String admin = TestTokens.issue(master.ctx, Role.ADMIN);
        JsonNode made = JSON.readTree(master.call("POST", "/api/v1/tokens", "{\"name\":\"workers\",\"role\":\"worker\"}", admin).body());
        Path tokenFile = Files.writeString(data.resolve("worker.token"), made.get("token").asText());
        Path index = data.resolve("w-one").resolve("dedup-worker");

        JsonNode first = registerOnce(index, tokenFile, admin);
        assertThat(first.get("epoch").asLong()).isEqualTo(1);
        assertThat(first.get("indexStartedOver").isNull()).as("a new worker had nothing to lose").isTrue();
        JsonNode second = registerOnce(index, tokenFile, admin);
        assertThat(second.get("epoch").asLong()).isEqualTo(2);
        assertThat(second.get("indexStartedOver").isNull()).as("epoch 1 in the file: kept").isTrue();

        // as if epoch 2's REGISTERED had been cut off before the worker recorded it
        Files.writeString(index.resolve("worker-id"), "1 1\n");
        Path content = Files.writeString(index.resolve("stand-in-for-a-container"), "what the index held");
        long before = System.currentTimeMillis();
        JsonNode third = registerOnce(index, tokenFile, admin);
        assertThat(third.get("epoch").asLong()).isEqualTo(3);
        assertThat(content).as("the index was started over").doesNotExist();
        JsonNode over = await().atMost(Duration.ofSeconds(10)).until(() -> worker1(admin).get("indexStartedOver"), n -> !n.isNull());
        assertThat(over.get("reason").asText()).isEqualTo("epoch-gap");
        assertThat(java.time.Instant.parse(over.get("at").asText()).toEpochMilli()).isBetween(before - 1000, System.currentTimeMillis());
        assertThat(worker1(TestTokens.issue(master.ctx, Role.VIEWER)).get("indexStartedOver").get("reason").asText()).isEqualTo("epoch-gap");
        assertThat(JSON.readTree(call("GET", "/api/v1/audit", admin).body()).get("entries")).anySatisfy(e -> {
            assertThat(e.get("action").asText()).isEqualTo("cluster.worker.index-started-over");
            assertThat(e.get("target").asText()).isEqualTo("worker:1(w-one)");
            assertThat(e.get("detail").asText()).contains("epoch-gap").contains("POST /api/v1/cluster/workers/1/rebuild");
        });

        // still shown while the worker is away and after it is back; a rebuild answers it
        LazyDedupWorker lazy = engine(index);
        try (WorkerConnector w = connect(tokenFile, lazy)) {
            assertThat(worker1(admin).get("indexStartedOver").get("reason").asText()).isEqualTo("epoch-gap");
            HttpResponse<String> started = call("POST", "/api/v1/cluster/workers/1/rebuild", admin);
            assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
            long job = JSON.readTree(started.body()).get("id").asLong();
            JsonNode done = await().atMost(Duration.ofSeconds(60)).until(() -> JSON.readTree(call("GET", "/api/v1/jobs/" + job,
                    admin).body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
            assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("succeeded");
            assertThat(worker1(admin).get("indexStartedOver").isNull()).as("answered by the rebuild").isTrue();
        } finally {
            lazy.close();
        }
    }
}
