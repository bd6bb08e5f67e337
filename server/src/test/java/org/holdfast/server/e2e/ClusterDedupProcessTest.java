package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Distributed dedup with real processes: a master with {@code holdfast.dedup.engine=cluster} and
 * two worker JVMs that hold the dedup index (each its own Sungem engine) and answer the master over
 * the TLS worker link. An agent backs up through the master; the snapshot restores byte for byte,
 * and a second full backup of the same data (a fresh agent state, so every block is offered again)
 * stores almost nothing new: the duplicates were found through the workers, the master has no index.
 */
class ClusterDedupProcessTest {
    private static final LogDir LOGS = new LogDir("ClusterDedupProcessTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int WORKERS = 2;
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    /** Small engines: the workers run with a small heap beside the other processes. */
    private static final Map<String, String> SMALL_ENGINE = Map.of("holdfast.dedup.sungem.sfi-size", "8MB",
            "holdfast.dedup.sungem.container-cache-size", "32MB");

    @TempDir
    Path work;
    private ServerProcess master;
    private final List<ServerProcess> workers = new ArrayList<>();

    @AfterEach
    void stop() {
        workers.forEach(ServerProcess::close);
        if (master != null) {
            master.close();
        }
    }

    private JsonNode upWorkers() throws Exception {
        HttpResponse<String> r = master.get("/api/v1/cluster/workers");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @Test
    void backupThroughMasterWithTwoWorkerProcesses_restoresByteIdentical_secondBackupDedupedByTheWorkers() throws Exception {
        int clusterPort = ServerProcess.freePort();
        Map<String, String> m = new HashMap<>(SMALL_ENGINE);
        m.putAll(Map.of("holdfast.cluster.role", "master", "holdfast.cluster.host", "127.0.0.2",
                "holdfast.cluster.port", Integer.toString(clusterPort), "holdfast.cluster.heartbeat-interval", "500ms",
                "holdfast.cluster.late-after", "2s", "holdfast.cluster.lost-after", "10s"));
        master = ServerProcess.start(work.resolve("master"), "cluster", m, LOGS);
        HttpResponse<String> issued = master.call("POST", "/api/v1/tokens", "{\"name\":\"dedup-workers\",\"role\":\"worker\"}");
        assertThat(issued.statusCode()).as(issued.body()).isEqualTo(201);
        Path tokenFile = Files.writeString(work.resolve("worker.token"), JSON.readTree(issued.body()).get("token").asText() + "\n");

        workers.addAll(ClusterProcessTest.startWorkers(work, master, clusterPort, tokenFile, "dedup-", WORKERS, SMALL_ENGINE, LOGS));
        long deadline = System.nanoTime() + 60_000_000_000L;
        JsonNode listed = upWorkers();
        while (System.nanoTime() < deadline && !(listed.size() == WORKERS
                && java.util.stream.StreamSupport.stream(listed.spliterator(), false).allMatch(w -> w.get("state").asText().equals("up")))) {
            ServerProcess.sleep(200);
            listed = upWorkers();
        }
        assertThat(listed).as("workers up: %s", listed).hasSize(WORKERS);

        AgentProcess agent = new AgentProcess(LOGS);
        VolumeImage img = VolumeImage.generate(18, 24 * MIB);
        img.fill(0, 24 * MIB, VolumeImage.Content.RANDOM);
        Path source = work.resolve("volume.img");
        img.writeTo(source);
        BackupSummary first = agent.backup(master, "vol", source, Files.createDirectories(work.resolve("state-1")),
                "--block-size", String.valueOf(BLOCK));
        System.out.println("[e2e] cluster dedup, first backup: " + first);
        long blocks = 24L * MIB / BLOCK;
        assertThat(first.newBlocks()).as("the first backup stores the random data: %s", first).isGreaterThan(blocks * 9 / 10);
        new RestoreCheck(agent, work).assertRestores(master, "vol", first.snapshotId(), source, BLOCK);

        BackupSummary second = agent.backup(master, "vol-again", source, Files.createDirectories(work.resolve("state-2")),
                "--block-size", String.valueOf(BLOCK));
        System.out.println("[e2e] cluster dedup, second backup of the same data: " + second);
        assertThat(second.newBlocks()).as("the workers found the duplicates: %s", second).isLessThan(blocks / 50);
        new RestoreCheck(agent, work).assertRestores(master, "vol-again", second.snapshotId(), source, BLOCK);
        for (int i = 0; i < WORKERS; i++) {
            assertThat(work.resolve("dedup-" + (i + 1)).resolve("data").resolve("dedup-worker")).as("worker %d holds an index", i + 1).isDirectory();
        }
    }
}
