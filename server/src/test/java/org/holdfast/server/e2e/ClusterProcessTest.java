package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Master/worker mode with real processes: a master on 127.0.0.2 with {@code
 * holdfast.dedup.engine=cluster} and four worker JVMs connecting from 127.0.0.3 to 127.0.0.6, TLS
 * on (each worker pins the master's certificate), a worker token made over the master's REST API.
 * All four are listed up with disjoint ranges. An agent backs up through the master; the snapshot
 * restores byte for byte, and a second full backup of the same data (a fresh agent state, so every
 * block is offered again) stores almost nothing new: the duplicates were found through the
 * workers, which hold the index. A worker killed with SIGKILL goes lost; started again on its data
 * directory it is up with the same id and range, the epoch one higher and its index as it was. A
 * worker opens no agent port. The master's console (headless Chromium) lists the workers. One
 * test, so the five JVMs start once.
 */
class ClusterProcessTest {
    private static final LogDir LOGS = new LogDir("ClusterProcessTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int WORKERS = 4;
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    /** Small engines: five server JVMs share the machine. */
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

    private static JsonNode json(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private JsonNode listed() {
        return json(master.get("/api/v1/cluster/workers"), 200);
    }

    private JsonNode awaitWorkers(String what, Predicate<JsonNode> done) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = listed();
            if (done.test(last)) {
                return last;
            }
            ServerProcess.sleep(200);
        }
        throw new AssertionError("workers not " + what + " after 60 s: " + last + "\n" + master.diagnostics());
    }

    private static JsonNode byNode(JsonNode list, String node) {
        for (JsonNode w : list) {
            if (w.get("nodeName").asText().equals(node)) {
                return w;
            }
        }
        return null;
    }

    /**
     * Starts {@code count} worker processes (in parallel) of the master's cluster port, node names
     * {@code prefix + 1..count}, connecting from 127.0.0.3 on, data under {@code work/prefix+n}.
     */
    private static List<ServerProcess> startWorkers(Path work, ServerProcess master, int clusterPort, Path tokenFile, String prefix, int count,
            Map<String, String> extra, LogDir logs) {
        List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Map<String, String> p = new HashMap<>(extra);
            p.put("holdfast.cluster.role", "worker");
            p.put("holdfast.cluster.host", "127.0.0." + (3 + i));
            p.put("holdfast.cluster.master", "127.0.0.2:" + clusterPort);
            p.put("holdfast.cluster.master-fingerprint", master.fingerprint().toString());
            p.put("holdfast.cluster.token-file", tokenFile.toString());
            p.put("holdfast.store.s3.node", prefix + (i + 1));
            Path dir = work.resolve(prefix + (i + 1));
            starting.add(CompletableFuture.supplyAsync(() -> ServerProcess.startWithHeap(dir, "sungem", p, logs, "256m")));
        }
        return starting.stream().map(CompletableFuture::join).toList();
    }

    @Test
    void masterAndFourWorkers_registerOverTls_dedupThroughTheWorkers_killedWorkerGoesLost_restartedComesBackWithItsIndex()
            throws Exception {
        int clusterPort = ServerProcess.freePort();
        Map<String, String> m = new HashMap<>(SMALL_ENGINE);
        m.putAll(Map.of("holdfast.cluster.role", "master",
                "holdfast.cluster.host", "127.0.0.2", "holdfast.cluster.port", Integer.toString(clusterPort),
                "holdfast.cluster.heartbeat-interval", "500ms", "holdfast.cluster.late-after", "2s",
                "holdfast.cluster.lost-after", "10s"));
        master = ServerProcess.start(work.resolve("master"), "cluster", m, LOGS);
        JsonNode issued = json(master.call("POST", "/api/v1/tokens", "{\"name\":\"cluster-workers\",\"role\":\"worker\"}"), 201);
        Path tokenFile = Files.writeString(work.resolve("worker.token"), issued.get("token").asText() + "\n");

        workers.addAll(startWorkers(work, master, clusterPort, tokenFile, "worker-", WORKERS, SMALL_ENGINE, LOGS));

        JsonNode all = awaitWorkers("all up", l -> l.size() == WORKERS
                && java.util.stream.StreamSupport.stream(l.spliterator(), false).allMatch(w -> w.get("state").asText().equals("up")));
        List<long[]> ranges = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            JsonNode w = byNode(all, "worker-" + (i + 1));
            assertThat(w).as("worker-%d in %s", i + 1, all).isNotNull();
            assertThat(w.get("address").asText()).startsWith("127.0.0." + (3 + i) + ":");
            assertThat(w.get("epoch").asLong()).isEqualTo(1);
            assertThat(w.get("lastHeartbeat").isNull()).isFalse();
            ranges.add(new long[] {Long.parseLong(w.get("pbnFirst").asText()), Long.parseLong(w.get("pbnLimit").asText())});
        }
        for (int i = 0; i < ranges.size(); i++) {
            for (int j = i + 1; j < ranges.size(); j++) {
                assertThat(ranges.get(i)[0] < ranges.get(j)[1] && ranges.get(j)[0] < ranges.get(i)[1]).as("ranges %d and %d overlap", i, j)
                        .isFalse();
            }
        }

        // an agent backs up through the master; the workers' indexes find the second copy
        AgentProcess agent = new AgentProcess(LOGS);
        VolumeImage img = VolumeImage.generate(18, 24 * MIB);
        img.fill(0, 24 * MIB, VolumeImage.Content.RANDOM);
        Path source = work.resolve("volume.img");
        img.writeTo(source);
        long blocks = 24L * MIB / BLOCK;
        BackupSummary first = backup(agent, "vol", source, "state-1");
        assertThat(first.newBlocks()).as("the first backup stores the random data: %s", first).isGreaterThan(blocks * 9 / 10);
        new RestoreCheck(agent, work).assertRestores(master, "vol", first.snapshotId(), source, BLOCK);
        BackupSummary again = backup(agent, "vol-again", source, "state-2");
        assertThat(again.newBlocks()).as("the workers found the duplicates: %s", again).isLessThan(blocks / 50);
        new RestoreCheck(agent, work).assertRestores(master, "vol-again", again.snapshotId(), source, BLOCK);
        for (int i = 0; i < WORKERS; i++) {
            assertThat(work.resolve("worker-" + (i + 1)).resolve("data").resolve("dedup-worker")).as("worker %d holds an index", i + 1)
                    .isDirectory();
        }

        // the master's console lists them on its Cluster page
        try (ConsoleBrowser b = ConsoleBrowser.open(master, "cluster")) {
            b.login("admin", ConsoleBrowser.initialAdminPassword(master));
            b.go("cluster");
            b.awaitVisible(org.openqa.selenium.By.cssSelector("[data-worker='worker-" + WORKERS + "']"));
            assertThat(b.all(ConsoleBrowser.test("worker-state"))).extracting(org.openqa.selenium.WebElement::getText)
                    .hasSize(WORKERS).containsOnly("up");
            assertThat(b.awaitVisible(ConsoleBrowser.test("cluster-role")).getText()).contains("master").contains("127.0.0.2:" + clusterPort);
            // an admin sees the token each worker is bound to (all four share the one made above)
            assertThat(b.all(ConsoleBrowser.test("worker-token"))).extracting(org.openqa.selenium.WebElement::getText)
                    .hasSize(WORKERS).allSatisfy(t -> assertThat(t).startsWith("cluster-workers"));
            b.screenshot("cluster-workers-up");
        }

        // a worker knows its membership and opens no agent port
        ServerProcess second = workers.get(1);
        JsonNode self = json(second.get("/api/v1/cluster"), 200);
        assertThat(self.get("role").asText()).isEqualTo("worker");
        assertThat(self.get("registration").get("connected").asBoolean()).isTrue();
        long secondId = self.get("registration").get("workerId").asLong();
        assertThat(secondId).isEqualTo(byNode(all, "worker-2").get("id").asLong());
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", second.ingestPort()), 2000);
            throw new AssertionError("a worker accepted a connection on the agent port " + second.ingestPort());
        } catch (IOException expected) {
            // refused: nothing listens
        }
        assertThat(json(second.get("/api/v1/cluster/workers"), 409).get("type").asText()).isEqualTo("urn:holdfast:problem:not-a-master");

        // SIGKILL: the kernel closes its connection, the master marks it lost; the others stay up
        assertThat(second.kill()).isTrue();
        JsonNode afterKill = awaitWorkers("worker-2 lost", l -> "lost".equals(byNode(l, "worker-2").get("state").asText()));
        for (String other : List.of("worker-1", "worker-3", "worker-4")) {
            assertThat(byNode(afterKill, other).get("state").asText()).as(other).isEqualTo("up");
        }

        second.start();
        JsonNode back = awaitWorkers("worker-2 up again", l -> "up".equals(byNode(l, "worker-2").get("state").asText())
                && byNode(l, "worker-2").get("epoch").asLong() == 2);
        JsonNode w2 = byNode(back, "worker-2");
        assertThat(w2.get("id").asLong()).isEqualTo(secondId);
        assertThat(Long.parseLong(w2.get("pbnFirst").asText())).isEqualTo(ranges.get(1)[0]);
        assertThat(Long.parseLong(w2.get("pbnLimit").asText())).isEqualTo(ranges.get(1)[1]);
        assertThat(back.size()).isEqualTo(WORKERS);
        JsonNode masterSelf = json(master.get("/api/v1/cluster"), 200);
        assertThat(masterSelf.get("role").asText()).isEqualTo("master");
        assertThat(masterSelf.get("workers").get("up").asInt()).isEqualTo(WORKERS);

        // the restarted worker answers from the index it kept on disk: a third copy is found again
        BackupSummary third = backup(agent, "vol-third", source, "state-3");
        assertThat(third.newBlocks()).as("dedup after the worker's restart: %s", third).isLessThan(blocks / 50);
        new RestoreCheck(agent, work).assertRestores(master, "vol-third", third.snapshotId(), source, BLOCK);
    }

    private BackupSummary backup(AgentProcess agent, String volume, Path source, String state) throws Exception {
        BackupSummary s = agent.backup(master, volume, source, Files.createDirectories(work.resolve(state)),
                "--block-size", String.valueOf(BLOCK));
        System.out.println("[e2e] cluster dedup, " + volume + ": " + s);
        return s;
    }
}
