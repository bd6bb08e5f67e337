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
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.ingest.cluster.DedupLinks;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master restarted keeps showing a worker's {@code indexStartedOver} (it is kept in the catalog),
 * and a rebuild's answer to it survives the next restart: a real master in this JVM, its catalog on
 * disk, a worker node with its index on disk over a real link.
 */
class WorkerIndexStartOverRestartApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path data;
    private ClusterDedupMaster master;
    /** Set up before each test: an admin token of the first master, worker w-one's token file and index. */
    private String admin;
    private Path tokenFile;
    private Path index;

    @BeforeEach
    void start() throws Exception {
        master = new ClusterDedupMaster(data.resolve("master"));
        admin = TestTokens.issue(master.ctx, Role.ADMIN);
        JsonNode made = JSON.readTree(master.call("POST", "/api/v1/tokens", "{\"name\":\"workers\",\"role\":\"worker\"}", admin).body());
        tokenFile = Files.writeString(data.resolve("worker.token"), made.get("token").asText());
        index = data.resolve("w-one").resolve("dedup-worker");
    }

    @AfterEach
    void stop() {
        if (master != null) {
            master.close();
        }
    }

    private JsonNode worker1(String token) throws Exception {
        return JSON.readTree(master.call("GET", "/api/v1/cluster/workers", token).body()).get(0);
    }

    private LazyDedupWorker engine(Path index) {
        return new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index, SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC()));
    }

    private WorkerConnector connect(Path tokenFile, LazyDedupWorker engine) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.clusterPort(),
                "127.0.0.1", "w-one", tokenFile, (MasterTrust) null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                Duration.ofMillis(200)), new LoadProbe(data), engine);
        w.start();
        await().atMost(Duration.ofSeconds(15)).until(() -> w.status().connected());
        return w;
    }

    /** Registers node w-one once, waits for the master's first index report of that registration, and disconnects. */
    private JsonNode registerOnce(Path index, Path tokenFile, String admin) throws Exception {
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

    private void restart() {
        master.close();
        master = null;
        master = new ClusterDedupMaster(data.resolve("master"));
    }

    /**
     * Registers node w-one three times, its third registration starting the index over (epoch-gap),
     * and returns worker 1's {@code indexStartedOver} as the master lists it.
     */
    private JsonNode startOverByAnEpochGap() throws Exception {
        registerOnce(index, tokenFile, admin); // epoch 1: a new worker with nothing to lose
        registerOnce(index, tokenFile, admin); // epoch 2: kept
        // as if epoch 2's REGISTERED had been cut off before the worker recorded it: epoch 3 starts over
        Files.writeString(index.resolve("worker-id"), "1 1\n");
        Files.writeString(index.resolve("stand-in-for-a-container"), "what the index held");
        registerOnce(index, tokenFile, admin);
        JsonNode over = await().atMost(Duration.ofSeconds(10)).until(() -> worker1(admin).get("indexStartedOver"), n -> !n.isNull());
        assertThat(over.get("reason").asText()).isEqualTo("epoch-gap");
        return over;
    }

    @Test
    void masterRestart_afterAStartOver_stillShowsItUntilARebuildWhoseAnswerSurvivesTheNextRestart() throws Exception {
        JsonNode over = startOverByAnEpochGap();

        restart();
        String admin2 = TestTokens.issue(master.ctx, Role.ADMIN);
        JsonNode kept = worker1(admin2).get("indexStartedOver");
        assertThat(kept).as("a master restart keeps the mark").isEqualTo(over);

        LazyDedupWorker lazy = engine(index);
        try (WorkerConnector w = connect(tokenFile, lazy)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> worker1(admin2).get("state").asText().equals("up"));
            HttpResponse<String> started = master.call("POST", "/api/v1/cluster/workers/1/rebuild", admin2);
            assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
            long job = JSON.readTree(started.body()).get("id").asLong();
            JsonNode done = await().atMost(Duration.ofSeconds(60)).until(() -> JSON.readTree(master.call("GET", "/api/v1/jobs/" + job,
                    admin2).body()), j -> j.get("state").asText().matches("succeeded|failed|cancelled"));
            assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("succeeded");
            assertThat(worker1(admin2).get("indexStartedOver").isNull()).as("answered by the rebuild").isTrue();
        } finally {
            lazy.close();
        }

        restart();
        assertThat(worker1(TestTokens.issue(master.ctx, Role.ADMIN)).get("indexStartedOver").isNull())
                .as("the rebuild's answer is durable").isTrue();
    }

    @Test
    void removeWorker_afterAStartOver_dropsItsMarkAndTheNodeReAddedByNameShowsOnlyItsOwn() throws Exception {
        startOverByAnEpochGap();

        HttpResponse<String> removed = master.call("DELETE", "/api/v1/cluster/workers/1", admin);
        assertThat(removed.statusCode()).as(removed.body()).isEqualTo(204);
        assertThat(master.ctx.getBean(DedupLinks.class).startedOver(1)).as("gone from the master's memory").isNull();
        assertThat(new ClusterStore(master.ctx.getBean(MetadataDb.class)).startOverMarks()).as("and from its catalog").isEmpty();

        Files.writeString(index.resolve("stand-in-for-a-container"), "what the index held"); // so epoch 1 has an index to drop
        JsonNode again = registerOnce(index, tokenFile, admin); // the same node name: a new worker, epoch 1
        assertThat(again.get("id").asLong()).as("ids are not reused").isNotEqualTo(1);
        assertThat(again.get("epoch").asLong()).isEqualTo(1);
        // its own report only: the old membership's index on its disk is wiped at epoch 1, never the removed worker's epoch-gap
        assertThat(again.get("indexStartedOver").get("reason").asText()).isEqualTo("new-membership");

        restart();
        JsonNode list = JSON.readTree(master.call("GET", "/api/v1/cluster/workers", TestTokens.issue(master.ctx, Role.ADMIN)).body());
        assertThat(list).as("only the re-added worker").hasSize(1);
        assertThat(list.get(0).get("indexStartedOver").get("reason").asText()).isEqualTo("new-membership");
        assertThat(master.ctx.getBean(DedupLinks.class).startedOver(1)).as("a restart does not bring the old mark back").isNull();
        assertThat(new ClusterStore(master.ctx.getBean(MetadataDb.class)).startOverMarks()).containsOnlyKeys(again.get("id").asLong());
    }
}
