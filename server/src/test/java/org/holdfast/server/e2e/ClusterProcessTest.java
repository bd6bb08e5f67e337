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
import org.holdfast.common.ports.TestPorts;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
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
 * workers, which hold the index. A worker opens no agent port. The master's console (headless
 * Chromium) lists the workers.
 *
 * <p>Faults (issue 18): the master halts itself mid-commit (kill point {@code commit.afterCatalogBatch},
 * armed at its start) and comes back on its data directory, the workers register again at epoch 2,
 * the interrupted snapshot is there whole; then a worker is SIGKILLed mid-backup, the backup fails
 * naming it (or completes), backups go on without it, and started again on its data directory it is
 * up with the same id and range, the next epoch and its index as it was. After each fault every
 * committed snapshot restores byte for byte and fsck is clean.
 *
 * <p>The master's data tier is S3Proxy (in this JVM, on a loopback port the master reaches;
 * {@code holdfast.store.backend=s3}, 2 MiB logs): sealed logs are uploaded, the master halted
 * mid-commit comes back on its directory and the bucket. Last, GC cycles with several agents: three
 * agent processes back up three volumes at once, four generations each, every generation copying a
 * region another volume committed before (found through the workers: stored again only in small
 * part); retention {@code keep-last=2} expires the oldest generations; a GC run while worker-4 is
 * stopped frees nothing and names it; with it back, two GC runs over REST free their blocks (each
 * forgotten by all four workers, as their metrics show) and compact logs in the object store. After
 * each run every retained snapshot restores byte for byte and fsck is clean, and a backup of a first
 * generation, whose blocks were freed, stores them again. Then a worker's host is lost with its disk:
 * a new node with an empty disk takes over its id and range, the rebuild job teaches it what the lost
 * worker held, and a repeat of that data stores almost nothing. One test, so the JVMs start once.
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

    /**
     * The GC grace: blocks a backup wrote are safe from the sweep that long. Short, so that the GC runs
     * here free blocks written in this test; not shorter, because the fsck right after worker-2's
     * SIGKILL must come within it: the blocks the failed backup stored are unreferenced, and GC cannot
     * free them while worker-2 is away, so past their grace fsck would count them as leaked. That fsck
     * starts well under a second after the kill (the link closes, so worker-2 is lost at once); 20 s
     * leaves a loaded machine ample room; the GC phase waits this grace out once.
     */
    private static final Duration GRACE = Duration.ofSeconds(20);
    private static final String S3_PREFIX = "cluster/";
    private static final String MASTER_NODE = "master";
    private static final int GC_VOLUMES = 3;
    private static final int GC_VOLUME_SIZE = 8 * MIB;
    /** Blocks in the 1 MiB a generation changes, and in the 1 MiB it copies from another volume. */
    private static final int REGION_BLOCKS = MIB / BLOCK;

    @TempDir
    Path work;
    private S3ProxyFixture s3;
    private ServerProcess master;
    private final List<ServerProcess> workers = new ArrayList<>();
    private int clusterPort;

    @AfterEach
    void stop() throws IOException {
        workers.forEach(ServerProcess::close);
        if (master != null) {
            master.close();
        }
        if (s3 != null) {
            s3.close();
        }
    }

    /**
     * The master's data tier in S3Proxy: small logs, so that sealed ones are uploaded and GC compacts
     * objects; retention keep-last=2 and a short {@link #GRACE}, so that a GC run in this test frees
     * what the expired snapshots alone held (24 h of grace would protect every block written here).
     */
    private Map<String, String> objectStoreAndGc() {
        Map<String, String> m = new HashMap<>();
        m.put("holdfast.store.backend", "s3");
        m.put("holdfast.store.s3.endpoint", s3.endpoint().toString());
        m.put("holdfast.store.s3.bucket", s3.bucket());
        m.put("holdfast.store.s3.prefix", s3.prefix(S3_PREFIX));
        m.put("holdfast.store.s3.credentials-file", s3.settings("").credentialsFile().toString());
        m.put("holdfast.store.s3.node", MASTER_NODE);
        m.put("holdfast.store.log-roll-size", "2MB");
        m.put("holdfast.gc.default-retention", "keep-last=2");
        m.put("holdfast.gc.grace", GRACE.toSeconds() + "s");
        m.put("holdfast.gc.compaction-threshold", "0.8");
        m.put("holdfast.verify.schedule", "0");
        m.put("holdfast.verify.window", "0");
        return m;
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
            String node = prefix + (i + 1);
            String host = "127.0.0." + (3 + i);
            starting.add(CompletableFuture.supplyAsync(() -> startWorker(work, master, clusterPort, tokenFile, node, host, extra, logs)));
        }
        return starting.stream().map(CompletableFuture::join).toList();
    }

    /** One worker process named {@code node}, connecting from {@code host}, data under {@code work/node}. */
    private static ServerProcess startWorker(Path work, ServerProcess master, int clusterPort, Path tokenFile, String node, String host,
            Map<String, String> extra, LogDir logs) {
        Map<String, String> p = new HashMap<>(extra);
        p.put("holdfast.cluster.role", "worker");
        p.put("holdfast.cluster.host", host);
        p.put("holdfast.cluster.master", "127.0.0.2:" + clusterPort);
        p.put("holdfast.cluster.master-fingerprint", master.fingerprint().toString());
        p.put("holdfast.cluster.token-file", tokenFile.toString());
        p.put("holdfast.store.s3.node", node);
        return ServerProcess.startWithHeap(work.resolve(node), "sungem", p, logs, "256m");
    }

    @Test
    void masterAndFourWorkers_registerOverTls_dedupThroughTheWorkers_surviveMasterKilledMidCommitAndWorkerKilledMidBackup()
            throws Exception {
        int clusterPort = TestPorts.claim("127.0.0.2"); // the master binds it on 127.0.0.2
        s3 = S3ProxyFixture.start(work.resolve("s3"));
        Map<String, String> m = new HashMap<>(SMALL_ENGINE);
        m.putAll(objectStoreAndGc());
        m.putAll(Map.of("holdfast.cluster.role", "master",
                "holdfast.cluster.host", "127.0.0.2", "holdfast.cluster.port", Integer.toString(clusterPort),
                "holdfast.cluster.heartbeat-interval", "1s", "holdfast.cluster.late-after", "4s",
                "holdfast.cluster.lost-after", "10s"));
        // its third snapshot commit halts it (the first two are the dedup backups below)
        master = ServerProcess.startArmed(work.resolve("master"), "cluster", m, LOGS, KillPoints.COMMIT_AFTER_CATALOG_BATCH, 3);
        JsonNode issued = json(master.call("POST", "/api/v1/tokens", "{\"name\":\"cluster-workers\",\"role\":\"worker\"}"), 201);
        Path tokenFile = Files.writeString(work.resolve("worker.token"), issued.get("token").asText() + "\n");
        this.clusterPort = clusterPort;

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
        committed.add(new Committed("vol", first.snapshotId(), source));
        BackupSummary again = backup(agent, "vol-again", source, "state-2");
        committed.add(new Committed("vol-again", again.snapshotId(), source));
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

        // the master halts at its third commit (armed at its start), mid-commit of a backup through the workers
        long t0 = System.nanoTime();
        masterKilledMidCommit(agent, img, blocks);

        // a worker SIGKILLed mid-backup; backups go on without it; restarted, it is back with its index
        long t1 = System.nanoTime();
        workerKilledMidBackup(agent, ranges.get(1), secondId, source, blocks);
        long t2 = System.nanoTime();
        System.out.printf("[e2e] cluster faults: master phase %.1f s, worker phase %.1f s%n", (t1 - t0) / 1e9, (t2 - t1) / 1e9);

        // three agents at once, four generations, two GC runs through the four workers
        gcCyclesWithSeveralAgents(agent);
        long t3 = System.nanoTime();
        System.out.printf("[e2e] cluster GC phase %.1f s%n", (t3 - t2) / 1e9);

        // a worker's host lost for good: a new node takes over its id and range, rebuilt from the store
        workerReplacedAndRebuilt(agent);
        System.out.printf("[e2e] cluster replacement phase %.1f s%n", (System.nanoTime() - t3) / 1e9);
    }

    /**
     * A worker's host is lost with its disk: the worker holding (nearly) all of a fresh image's index
     * is SIGKILLed and its data directory deleted. An admin hands its worker id and PBN range to a new
     * node, {@code worker-5} on 127.0.0.7 with an empty disk, which registers with the next epoch of that
     * id; without its index the cluster would store the image again (the image went to one home
     * worker). The rebuild job teaches the new node, from the master's store, the blocks no other
     * worker answers; a repeat of the image (a fresh agent state: every block offered) then stores
     * almost nothing, every committed snapshot restores, and fsck is clean.
     */
    private void workerReplacedAndRebuilt(AgentProcess agent) throws Exception {
        int size = 16 * MIB;
        long imageBlocks = size / BLOCK;
        VolumeImage img = VolumeImage.generate(40, size).fill(0, size, Content.RANDOM);
        Path file = img.writeTo(work.resolve("volume-replace.img"));
        long[] before = storedPerWorker();
        BackupSummary first = backup(agent, "vol-replace", file, "state-replace");
        assertThat(first.newBlocks()).as("new data: %s", first).isGreaterThan(imageBlocks * 9 / 10);
        committed.add(new Committed("vol-replace", first.snapshotId(), file));
        long[] after = storedPerWorker();
        int victim = 0;
        for (int i = 1; i < WORKERS; i++) {
            if (after[i] - before[i] > after[victim] - before[victim]) {
                victim = i;
            }
        }
        long share = after[victim] - before[victim];
        assertThat(share).as("one worker holds most of the image (stored per worker %s -> %s)", java.util.Arrays.toString(before),
                java.util.Arrays.toString(after)).isGreaterThan(imageBlocks / 2);

        String lostNode = "worker-" + (victim + 1);
        JsonNode lostItem = byNode(listed(), lostNode);
        long id = lostItem.get("id").asLong();
        ServerProcess lost = workers.get(victim);
        assertThat(lost.kill()).as(lostNode + " ran until the kill").isTrue();
        try (java.util.stream.Stream<Path> files = Files.walk(work.resolve(lostNode))) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
        awaitWorkers(lostNode + " lost", l -> "lost".equals(byNode(l, lostNode).get("state").asText()));

        // the new host gets a token of its own, bound in the same call (docs/operations.md's procedure)
        JsonNode token = json(master.call("POST", "/api/v1/tokens", "{\"name\":\"worker-5\",\"role\":\"worker\"}"), 201);
        Path token5 = Files.writeString(work.resolve("worker-5.token"), token.get("token").asText() + "\n");
        String tokenId = token.get("info").get("id").asText();
        JsonNode replaced = json(master.call("POST", "/api/v1/cluster/workers/" + id + "/replace",
                "{\"node\":\"worker-5\",\"tokenId\":\"" + tokenId + "\"}"), 200);
        assertThat(replaced.get("nodeName").asText()).isEqualTo("worker-5");
        assertThat(replaced.get("id").asLong()).isEqualTo(id);
        assertThat(replaced.get("tokenId").asText()).isEqualTo(tokenId);
        ServerProcess replacement = startWorker(work, master, clusterPort, token5, "worker-5", "127.0.0.7", SMALL_ENGINE, LOGS);
        workers.set(victim, replacement);
        JsonNode up = awaitWorkers("worker-5 up as worker " + id, l -> byNode(l, "worker-5") != null
                && "up".equals(byNode(l, "worker-5").get("state").asText()));
        JsonNode w5 = byNode(up, "worker-5");
        assertThat(w5.get("id").asLong()).as("the replacement takes over the lost worker's id").isEqualTo(id);
        assertThat(w5.get("pbnFirst").asText()).isEqualTo(lostItem.get("pbnFirst").asText());
        assertThat(w5.get("pbnLimit").asText()).isEqualTo(lostItem.get("pbnLimit").asText());
        assertThat(w5.get("epoch").asLong()).as("epochs of an id only grow").isGreaterThan(lostItem.get("epoch").asLong());
        assertThat(byNode(up, lostNode)).as("the lost node is no longer listed").isNull();
        assertThat(up.size()).isEqualTo(WORKERS);

        JsonNode rebuild = master.runJob("/api/v1/cluster/workers/" + id + "/rebuild", Duration.ofMinutes(3));
        assertThat(rebuild.get("state").asText()).as("rebuild: %s\n%s", rebuild, master.diagnostics()).isEqualTo("succeeded");
        System.out.println("[e2e] cluster rebuild of worker " + id + ": " + rebuild.get("result"));
        long stored = ObjectStoreE2eTest.metric(replacement, "holdfast_dedup_worker_stored");
        assertThat(stored).as("the replacement learnt the lost worker's share of the image, and not everything").isGreaterThanOrEqualTo(share * 9 / 10);

        BackupSummary again = backup(agent, "vol-replace-again", file, "state-replace-again");
        assertThat(again.newBlocks()).as("the replacement answers what the lost worker held: %s", again).isLessThan(imageBlocks / 50);
        committed.add(new Committed("vol-replace-again", again.snapshotId(), file));
        assertCommittedRestoreAndFsckIsClean("after the replacement and its rebuild");
    }

    /** Each worker's stored fingerprints (its metric), in the order of {@link #workers}. */
    private long[] storedPerWorker() {
        long[] stored = new long[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            stored[i] = ObjectStoreE2eTest.metric(workers.get(i), "holdfast_dedup_worker_stored");
        }
        return stored;
    }

    /** Every snapshot committed so far, with the image it must restore to. */
    private record Committed(String volume, String id, Path image) {
    }

    private final List<Committed> committed = new ArrayList<>();

    /**
     * The master was started with {@code commit.afterCatalogBatch} armed at its third hit: a backup of
     * a changed image halts it there (the catalog batch is durable, the GC log has not the commit).
     * Restarted on its data directory and cluster port, the workers register again (epoch 2); the
     * interrupted snapshot is there whole (at this point it must be) and restores, the ones before
     * too, fsck is clean, and a fresh backup of the same image is deduplicated against it.
     */
    private void masterKilledMidCommit(AgentProcess agent, VolumeImage img, long blocks) throws Exception {
        VolumeImage changed = img.copy(20).fill(4 * MIB, 3 * MIB, VolumeImage.Content.RANDOM);
        Path changedImage = changed.writeTo(work.resolve("volume-changed.img"));
        AgentResult halted = agent.run(AgentProcess.backupArgs(master, "vol", changedImage, work.resolve("state-1"),
                "--block-size", String.valueOf(BLOCK)));
        assertThat(master.awaitKillPoint(Duration.ofMinutes(2))).as("the master halted at commit.afterCatalogBatch: %s\n%s", halted,
                master.diagnostics()).isTrue();
        assertThat(halted.succeeded()).as("the agent got no acknowledgement: %s", halted).isFalse();
        assertThat(halted.stderrLines()).as("no stack trace: %s", halted).noneMatch(l -> l.startsWith("\tat "));

        master.start();
        awaitWorkers("all up again at epoch 2 after the master's restart", l -> l.size() == WORKERS
                && java.util.stream.StreamSupport.stream(l.spliterator(), false)
                        .allMatch(w -> w.get("state").asText().equals("up") && w.get("epoch").asLong() == 2));
        List<String> listed = new ArrayList<>();
        json(master.get("/api/v1/volumes/vol/snapshots"), 200).forEach(n -> listed.add(n.get("id").asText()));
        assertThat(listed).as("the first snapshot and the one whose catalog batch was durable").hasSize(2)
                .contains(committed.get(0).id());
        String interrupted = listed.stream().filter(id -> !id.equals(committed.get(0).id())).findFirst().orElseThrow();
        committed.add(new Committed("vol", interrupted, changedImage));
        assertCommittedRestoreAndFsckIsClean("after the master's SIGKILL mid-commit");

        BackupSummary after = backup(agent, "vol-after-master", changedImage, "state-after-master");
        assertThat(after.newBlocks()).as("deduplicated against the interrupted commit: %s", after).isLessThan(blocks / 50);
        committed.add(new Committed("vol-after-master", after.snapshotId(), changedImage));
        assertCommittedRestore();
    }

    /**
     * SIGKILL of worker-2 while a backup of new data runs through it (the master has stored part of
     * the upload, so it has sent every worker lookups): the backup either fails naming the lost
     * worker or completes (its records may all have gone elsewhere). Everything committed restores,
     * fsck is clean. With worker-2 still lost the next backup is served by the other three, and finds
     * most of what the failed one stored (taught to them as it ended). Restarted,
     * worker-2 is up with its id and range and the next epoch, and a repeat of the first image stores
     * ~nothing (worker-2 answers from the index it kept on disk).
     */
    private void workerKilledMidBackup(AgentProcess agent, long[] range, long secondId, Path firstImage, long blocks) throws Exception {
        ServerProcess second = workers.get(1);
        int size = 32 * MIB;
        VolumeImage fresh = VolumeImage.generate(21, size).fill(0, size, VolumeImage.Content.RANDOM);
        Path freshImage = fresh.writeTo(work.resolve("volume-fresh.img"));
        long dataBefore = master.dataLogBytes();
        AgentProcess.Running run = agent.start(AgentProcess.backupArgs(master, "vol-inflight", freshImage,
                Files.createDirectories(work.resolve("state-inflight")), "--block-size", String.valueOf(BLOCK)));
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (run.isAlive() && master.dataLogBytes() - dataBefore < size / 5 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        boolean inFlight = run.isAlive();
        long grown = master.dataLogBytes() - dataBefore;
        assertThat(second.kill()).as("worker-2 ran until the kill").isTrue();
        AgentResult r = run.await();
        System.out.println("[e2e] worker-2 killed " + (inFlight ? "while the backup ran" : "after the backup ended") + " (master data +"
                + grown + " B of " + size + "); agent " + (r.succeeded() ? "committed" : "failed: " + r.stderrLines()));
        if (r.succeeded()) {
            committed.add(new Committed("vol-inflight", BackupSummary.parse(r).snapshotId(), freshImage));
        } else {
            List<String> lines = r.stderrLines();
            assertThat(lines.get(lines.size() - 1)).as("the agent names the lost worker and what to do: %s", r)
                    .startsWith("holdfast-agent: error:").contains("dedup worker worker-2 is lost").contains("run it again");
            assertThat(lines).as("no stack trace: %s", r).noneMatch(l -> l.startsWith("\tat "));
            assertThat(master.get("/api/v1/volumes/vol-inflight").statusCode()).as("nothing of the failed backup is committed")
                    .isEqualTo(404);
        }
        // the others up in the same listing: one taken at an instant may catch a worker LATE (4 s without a
        // heartbeat) on a machine loaded by five JVMs, until its next heartbeat
        List<String> others = List.of("worker-1", "worker-3", "worker-4");
        JsonNode afterKill = awaitWorkers("worker-2 lost and the others up", l -> "lost".equals(byNode(l, "worker-2").get("state").asText())
                && others.stream().allMatch(o -> "up".equals(byNode(l, o).get("state").asText())));
        for (String other : others) {
            assertThat(byNode(afterKill, other).get("state").asText()).as(other).isEqualTo("up");
        }
        assertCommittedRestoreAndFsckIsClean("after worker-2's SIGKILL mid-backup");

        // worker-2 stays lost: the other three serve the backup (the master's message said to run it again)
        BackupSummary without = backup(agent, "vol-inflight", freshImage, "state-without-2");
        // the blocks the failed backup had stored were taught to the workers still up as it ended
        assertThat(without.newBlocks()).as("the rerun uploads again at most half of the %d B stored before the kill: %s", grown, without)
                .isLessThan(size / BLOCK - grown / (2L * BLOCK));
        committed.add(new Committed("vol-inflight", without.snapshotId(), freshImage));
        assertCommittedRestore();

        second.start();
        JsonNode back = awaitWorkers("worker-2 up again, with the others", l -> "up".equals(byNode(l, "worker-2").get("state").asText())
                && byNode(l, "worker-2").get("epoch").asLong() == 3
                && others.stream().allMatch(o -> "up".equals(byNode(l, o).get("state").asText())));
        JsonNode w2 = byNode(back, "worker-2");
        assertThat(w2.get("id").asLong()).isEqualTo(secondId);
        assertThat(Long.parseLong(w2.get("pbnFirst").asText())).isEqualTo(range[0]);
        assertThat(Long.parseLong(w2.get("pbnLimit").asText())).isEqualTo(range[1]);
        assertThat(back.size()).isEqualTo(WORKERS);
        JsonNode masterSelf = json(master.get("/api/v1/cluster"), 200);
        assertThat(masterSelf.get("role").asText()).isEqualTo("master");
        assertThat(masterSelf.get("workers").get("up").asInt()).isEqualTo(WORKERS);

        // with all four again, a repeat (a fresh agent state: every block offered) stores ~nothing
        BackupSummary third = backup(agent, "vol-third", firstImage, "state-3");
        assertThat(third.newBlocks()).as("worker-2 answers from the index it kept on disk: %s", third).isLessThan(blocks / 50);
        committed.add(new Committed("vol-third", third.snapshotId(), firstImage));
        assertCommittedRestore();
    }

    /**
     * Three agent processes back up {@code gc-0..2} at once, generation after generation, close
     * together: keep-last's expiry estimate is K times the longest recent interval between a volume's
     * snapshots (the test waits for it before each run that must delete). Each volume
     * is 4 MiB of content all three share, then 4 MiB of its own. Generation {@code g >= 1} of a volume
     * writes 1 MiB of new data at {@code 4 + g - 1} MiB and copies to {@code g - 1} MiB a region its
     * neighbour committed in an earlier generation (its own data at 7 MiB, later the new data of its
     * previous generation): the copy is found through the workers, so a generation stores about its
     * new MiB only. With keep-last=2, the GC run after generation 2 deletes generation 0; it frees
     * nothing while worker-4 is stopped (the run fails naming it), and with worker-4 back the next run
     * frees what only generation 0 held (1 MiB of shared content, stored once or, as the first backups
     * run at once, up to three times; and 1 MiB of each volume's own); a backup of gc-0's
     * generation 0 under a new name then stores those 2 MiB again and nothing else (no reference to a
     * freed PBN; that the workers forgot them shows in their forgotten counts, checked against each
     * run's freed blocks). Generation 3 and a second run free generation 1's
     * blocks. After each run the retained snapshots are exactly the newest two, restore byte for
     * byte, fsck is clean; compaction rewrote or deleted logs in the object store.
     */
    private void gcCyclesWithSeveralAgents(AgentProcess agent) throws Exception {
        VolumeImage shared = VolumeImage.generate(30, GC_VOLUME_SIZE).fill(0, GC_VOLUME_SIZE, Content.RANDOM);
        List<VolumeImage> images = new ArrayList<>();
        List<Path> states = new ArrayList<>();
        List<List<Committed>> generations = new ArrayList<>();
        for (int v = 0; v < GC_VOLUMES; v++) {
            images.add(shared.copy(31 + v).fill(GC_VOLUME_SIZE / 2, GC_VOLUME_SIZE / 2, Content.RANDOM));
            states.add(Files.createDirectories(work.resolve("state-gc-" + v)));
            generations.add(new ArrayList<>());
        }
        gcGeneration(agent, images, states, generations, 0);
        long graceFrom = System.nanoTime(); // every block of generation 0 is written by now
        for (int g = 1; g <= 2; g++) {
            gcGeneration(agent, images, states, generations, g);
        }

        // worker-4 away (stopped while the grace runs out): a GC run deletes the expired snapshots but
        // frees nothing, and says which worker to bring back
        ServerProcess fourth = workers.get(WORKERS - 1);
        fourth.close();
        awaitWorkers("worker-4 lost", l -> "lost".equals(byNode(l, "worker-4").get("state").asText()));
        // the blocks only generation 0 held were written more than the grace ago; then GC frees them
        long wait = graceFrom + GRACE.plusSeconds(1).toNanos() - System.nanoTime();
        System.out.printf("[e2e] cluster GC: %.1f s to wait for the grace of generation 0%n", Math.max(0, wait) / 1e9);
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000);
        }
        awaitExpiry(generations, 0);
        JsonNode refused = master.runJob("/api/v1/gc/runs", Duration.ofMinutes(3));
        assertThat(refused.get("state").asText()).as("a GC run while worker-4 is away: %s", refused).isEqualTo("failed");
        assertThat(refused.get("error").asText()).as("%s", refused).contains("dedup worker worker-4").contains("is not connected")
                .contains("bring the worker back");
        fourth.start();
        awaitWorkers("worker-4 up again", l -> "up".equals(byNode(l, "worker-4").get("state").asText()));
        // generation 0 went in the refused run already; its blocks go now: at least each volume's own MiB
        // and the shared MiB (stored up to three times)
        JsonNode first = gcRun("first GC run", 0, (GC_VOLUMES + 1L) * REGION_BLOCKS, generations, 1);
        BackupSummary again = backup(agent, "gc-0-again", generations.get(0).get(0).image(), "state-gc-0-again");
        assertThat(again.newBlocks()).as("the freed 2 MiB of gc-0's first generation are stored again, the rest is found: %s", again)
                .isBetween(2L * REGION_BLOCKS, 2L * REGION_BLOCKS + REGION_BLOCKS / 4);
        committed.add(new Committed("gc-0-again", again.snapshotId(), generations.get(0).get(0).image()));
        assertRestores(committed.stream().filter(c -> c.volume().startsWith("gc-")).toList());
        assertFsckIsClean("after the first GC run");

        gcGeneration(agent, images, states, generations, 3);
        awaitExpiry(generations, 1);
        JsonNode second = gcRun("second GC run", GC_VOLUMES, (GC_VOLUMES - 1L) * REGION_BLOCKS, generations, 2);
        assertCommittedRestoreAndFsckIsClean("after the second GC run");

        long freed = first.get("sweep").get("freed").asLong() + second.get("sweep").get("freed").asLong();
        for (int i = 0; i < WORKERS; i++) {
            assertThat(ObjectStoreE2eTest.metric(workers.get(i), "holdfast_dedup_worker_forgotten_total"))
                    .as("worker-%d forgot every PBN the two runs freed", i + 1).isEqualTo(freed);
        }
        long compacted = 0;
        for (JsonNode r : List.of(first, second)) {
            compacted += r.get("compaction").get("logsRewritten").asLong() + r.get("compaction").get("logsDeleted").asLong();
        }
        assertThat(compacted).as("compaction rewrote or deleted logs in the object store: %s %s", first, second).isPositive();
        try (ObjectStore objects = S3ObjectStore.open(s3.settings(S3_PREFIX))) {
            assertThat(objects.list(MASTER_NODE + "/logs/")).as("the master's sealed logs are objects").isNotEmpty();
        }
    }

    /**
     * Generation {@code g} of every GC volume, backed up by one agent process per volume at once.
     * From generation 1 on, each stores little more than its new MiB: the MiB it copied from its
     * neighbour is found through the workers.
     */
    private void gcGeneration(AgentProcess agent, List<VolumeImage> images, List<Path> states, List<List<Committed>> generations,
            int g) throws Exception {
        if (g > 0) {
            for (int v = 0; v < GC_VOLUMES; v++) {
                // the neighbour's region was committed in an earlier generation and is never changed later
                int from = g == 1 ? 7 * MIB : (4 + g - 2) * MIB;
                images.get(v).copyFrom(images.get((v + 1) % GC_VOLUMES), from, (g - 1) * MIB, MIB);
            }
            for (int v = 0; v < GC_VOLUMES; v++) {
                images.get(v).fill((4 + g - 1) * MIB, MIB, Content.RANDOM);
            }
        }
        List<Path> files = new ArrayList<>();
        List<AgentProcess.Running> runs = new ArrayList<>();
        for (int v = 0; v < GC_VOLUMES; v++) {
            Path file = images.get(v).writeTo(work.resolve("gc-" + v + "-" + g + ".img"));
            files.add(file);
            runs.add(agent.start(AgentProcess.backupArgs(master, "gc-" + v, file, states.get(v), "--block-size", String.valueOf(BLOCK))));
        }
        for (int v = 0; v < GC_VOLUMES; v++) {
            AgentResult r = runs.get(v).await();
            assertThat(r.succeeded()).as("gc-%d generation %d: %s\n%s", v, g, r, master.diagnostics()).isTrue();
            BackupSummary s = BackupSummary.parse(r);
            System.out.println("[e2e] cluster GC, gc-" + v + " generation " + g + ": new " + s.newBlocks() + " of " + s.changedBlocks()
                    + " changed blocks");
            if (g > 0) {
                assertThat(s.changedBlocks()).as("gc-%d generation %d: %s", v, g, s).isGreaterThanOrEqualTo(2L * REGION_BLOCKS);
                assertThat(s.newBlocks()).as("gc-%d generation %d stores its new MiB; the copied one was found through the workers: %s",
                        v, g, s).isBetween((long) REGION_BLOCKS, REGION_BLOCKS + REGION_BLOCKS / 4L);
            }
            Committed c = new Committed("gc-" + v, s.snapshotId(), files.get(v));
            generations.get(v).add(c);
            committed.add(c);
        }
    }

    /**
     * Waits until generation {@code g} of every GC volume has passed its expiry as the master recorded
     * it: under keep-last a snapshot out of the newest K is deleted only then (created plus K times
     * the longest recent interval, an estimate that a loaded machine can stretch).
     */
    private void awaitExpiry(List<List<Committed>> generations, int g) throws InterruptedException {
        long latest = 0;
        for (int v = 0; v < GC_VOLUMES; v++) {
            JsonNode hold = json(master.get("/api/v1/volumes/gc-" + v + "/snapshots/" + generations.get(v).get(g).id() + "/hold"), 200);
            latest = Math.max(latest, hold.get("expiryMillis").asLong());
        }
        long wait = latest + 1000 - System.currentTimeMillis();
        System.out.printf("[e2e] cluster GC: %.1f s to wait for the expiry of generation %d%n", Math.max(0, wait) / 1e3, g);
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    /**
     * One GC run over REST: it must delete at least {@code minDeleted} snapshots and free at least
     * {@code minFreed} blocks; generation {@code expired - 1} of every GC volume is gone after it
     * (keep-last=2) and leaves {@link #committed}. Answers the run's result.
     */
    private JsonNode gcRun(String what, int minDeleted, long minFreed, List<List<Committed>> generations, int expired) {
        JsonNode job = master.runJob("/api/v1/gc/runs", Duration.ofMinutes(3));
        assertThat(job.get("state").asText()).as("%s: %s\n%s", what, job, master.diagnostics()).isEqualTo("succeeded");
        JsonNode result = job.get("result");
        System.out.println("[e2e] cluster GC, " + what + ": " + result);
        assertThat(result.get("snapshotsDeleted").asInt()).as("%s: %s", what, result).isGreaterThanOrEqualTo(minDeleted);
        assertThat(result.get("sweep").get("freed").asLong()).as("%s freed blocks (each forgotten by every worker): %s", what, result)
                .isGreaterThanOrEqualTo(minFreed);
        for (int v = 0; v < GC_VOLUMES; v++) {
            List<Committed> gens = generations.get(v);
            List<String> listed = new ArrayList<>();
            json(master.get("/api/v1/volumes/gc-" + v + "/snapshots"), 200).forEach(n -> listed.add(n.get("id").asText()));
            assertThat(listed).as("%s: gc-%d keeps its newest two", what, v)
                    .containsExactlyInAnyOrder(gens.get(expired).id(), gens.get(expired + 1).id());
            committed.remove(gens.get(expired - 1));
        }
        return result;
    }

    private void assertCommittedRestoreAndFsckIsClean(String when) throws Exception {
        // fsck first: after a failed backup its blocks must be checked within the grace ({@link #GRACE}), which
        // the restores of every committed snapshot could use up on a loaded machine
        assertFsckIsClean(when);
        assertCommittedRestore();
    }

    private void assertFsckIsClean(String when) {
        JsonNode fsck = master.runJob("/api/v1/gc/fsck", Duration.ofMinutes(2));
        assertThat(fsck.get("state").asText()).as("fsck %s: %s", when, fsck).isEqualTo("succeeded");
        assertThat(fsck.get("result").get("clean").asBoolean()).as("fsck %s: %s", when, fsck).isTrue();
    }

    /** Every committed snapshot restores byte for byte, over the wire in this JVM (no agent JVM per snapshot). */
    private void assertCommittedRestore() throws Exception {
        assertRestores(committed);
    }

    private void assertRestores(List<Committed> snapshots) throws Exception {
        try (WireProbe p = new WireProbe(master.ingestPort(), master.clientTls(), master.agentToken())) {
            p.hello();
            for (Committed c : snapshots) {
                long seq = org.holdfast.common.id.SnapshotId.parse(c.id(), new org.holdfast.common.id.VolumeId(c.volume())).sequence();
                byte[] restored = p.restore(c.volume(), seq);
                assertThat(java.util.Arrays.mismatch(restored, Files.readAllBytes(c.image())))
                        .as("%s@%s restores byte for byte (first difference at byte, -1 = none)", c.volume(), c.id()).isEqualTo(-1);
            }
        }
    }

    private BackupSummary backup(AgentProcess agent, String volume, Path source, String state) throws Exception {
        BackupSummary s = agent.backup(master, volume, source, Files.createDirectories(work.resolve(state)),
                "--block-size", String.valueOf(BLOCK));
        System.out.println("[e2e] cluster dedup, " + volume + ": " + s);
        return s;
    }
}
