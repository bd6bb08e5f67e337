package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data on workers with distributed GC, with real processes (issue 18): a master on 127.0.0.2 with
 * {@code holdfast.cluster.data=workers}, GC bookkeeping on, retention {@code keep-last=1} and a 3 s
 * grace, and two worker JVMs (127.0.0.3, 127.0.0.4; 1 MB data logs, so that each sweep's compaction
 * rewrites or deletes logs), TLS on. Agent processes back up two volumes, generation after
 * generation, each generation replacing one MiB; a GC run over REST deletes the older generations
 * and every worker reports SWEPT in the job's log, freeing exactly the replaced MiBs (the GC did real
 * work on the workers, and their compactions gave bytes back); a backup of the freed content stores
 * it again. Then a worker (the one storing a fresh image) is SIGKILLed mid-backup: the backup fails
 * naming it (or completes); restarted on its data directory it registers again, the backup succeeds,
 * and the next GC run sweeps both workers and frees again. Then the master is SIGKILLed during a GC
 * run, once its retention has deleted snapshots; restarted, its next run sweeps both workers and the
 * replaced MiBs are freed on them (the workers' own logs count it). Last, the master halts in a
 * commit (catalog batch durable, counts not yet routed to the workers): restarted, it re-drives the
 * counts, and past the grace a GC run keeps that snapshot's new blocks. After each GC run every
 * retained snapshot restores byte for byte (read from the workers through the master). fsck is
 * refused on such a master (409 data-on-workers). One test, so the JVMs start once; tagged slow
 * (about two and a half minutes on two cores).
 */
@Tag("slow")
class DataOnWorkersProcessTest {
    private static final LogDir LOGS = new LogDir("DataOnWorkersProcessTest");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int WORKERS = 2;
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    private static final int VOLUME_SIZE = 4 * MIB;
    /** Blocks in the MiB a generation replaces. */
    private static final int REGION_BLOCKS = MIB / BLOCK;
    /** Short, so that a GC run here frees blocks this test wrote (both the master's and the workers' setting). */
    private static final Duration GRACE = Duration.ofSeconds(3);
    /** Small engines: three server JVMs share the machine. */
    private static final Map<String, String> SMALL_ENGINE = Map.of("holdfast.dedup.sungem.sfi-size", "8MB",
            "holdfast.dedup.sungem.container-cache-size", "32MB");
    /** The master's job log line per worker ({@code WorkerSweeps}). */
    private static final Pattern WORKER_SWEEP = Pattern.compile("worker sweep of worker (\\d+): ([A-Z_]+), (?:(\\d+) blocks freed)?");
    /** The worker's own log line per range sweep ({@code RangeSweepReport}). */
    private static final Pattern RANGE_SWEEP = Pattern.compile("(?<!dry-run )range sweep of PBNs .*?: \\d+ GMA chunks read, \\d+ skipped,"
            + " (\\d+) blocks freed;.*?; (?:compaction gave back (\\d+) bytes|no compaction);");

    @TempDir
    Path work;
    private ServerProcess master;
    private final List<ServerProcess> workers = new ArrayList<>();
    private final AgentProcess agent = new AgentProcess(LOGS);
    /** Every snapshot that must restore, with the image it must restore to. */
    private final List<Committed> retained = new ArrayList<>();
    private final List<Volume> volumes = new ArrayList<>();
    /** When the last backup ended (epoch ms): its blocks are protected a {@link #GRACE} from then. */
    private long lastWrite;

    private record Committed(String volume, String id, Path image) {
    }

    /** A volume backed up generation after generation by one agent state. */
    private record Volume(String name, VolumeImage image, Path state, List<Committed> generations) {
    }

    @AfterEach
    void stop() {
        workers.forEach(ServerProcess::close);
        if (master != null) {
            master.close();
        }
    }

    @Test
    void masterAndTwoWorkers_dataOnWorkersWithGc_workersFreeTheGarbage_retainedRestoreAfterWorkerAndMasterSigkill() throws Exception {
        long t0 = System.nanoTime();
        int clusterPort = TestPorts.claim("127.0.0.2");
        Map<String, String> m = new HashMap<>(SMALL_ENGINE);
        m.putAll(Map.of("holdfast.cluster.role", "master", "holdfast.cluster.host", "127.0.0.2",
                "holdfast.cluster.port", Integer.toString(clusterPort), "holdfast.cluster.heartbeat-interval", "1s",
                "holdfast.cluster.late-after", "4s", "holdfast.cluster.lost-after", "10s", "holdfast.cluster.data", "workers"));
        m.putAll(Map.of("holdfast.gc.default-retention", "keep-last=1", "holdfast.gc.grace", GRACE.toSeconds() + "s",
                "holdfast.gc.interval", "1h", "holdfast.verify.schedule", "0"));
        master = ServerProcess.start(work.resolve("master"), "cluster", m, LOGS);
        JsonNode issued = json(master.call("POST", "/api/v1/tokens", "{\"name\":\"dw-workers\",\"role\":\"worker\"}"), 201);
        Path tokenFile = Files.writeString(work.resolve("worker.token"), issued.get("token").asText() + "\n");
        List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
        for (int i = 1; i <= WORKERS; i++) {
            String node = "worker-" + i;
            String host = "127.0.0." + (2 + i);
            starting.add(CompletableFuture.supplyAsync(() -> startWorker(clusterPort, tokenFile, node, host)));
        }
        starting.forEach(f -> workers.add(f.join()));
        JsonNode up = awaitWorkers("up and serving range data", l -> l.size() == WORKERS && allUp(l)
                && StreamSupport.stream(l.spliterator(), false).allMatch(w -> "serving".equals(w.path("rangeData").path("state").asText())));
        List<Long> ids = new ArrayList<>();
        for (int i = 1; i <= WORKERS; i++) {
            ids.add(byNode(up, "worker-" + i).get("id").asLong());
        }
        long t1 = System.nanoTime();

        // two volumes, three generations: each of generations 1 and 2 replaces one MiB of each volume
        VolumeImage a = VolumeImage.generate(50, VOLUME_SIZE).fill(0, VOLUME_SIZE, Content.RANDOM);
        VolumeImage b = a.copy(51).fill(MIB, VOLUME_SIZE - MIB, Content.RANDOM); // shares its first MiB with a
        volumes.add(new Volume("dw-a", a, Files.createDirectories(work.resolve("state-a")), new ArrayList<>()));
        volumes.add(new Volume("dw-b", b, Files.createDirectories(work.resolve("state-b")), new ArrayList<>()));
        for (int g = 0; g <= 2; g++) {
            generation(g);
        }

        // GC: generations 0 and 1 go; what only they held (each volume's first content of MiB 1 and 2) is freed on the workers
        awaitExpiry(1);
        JsonNode first = gcRun("first GC run", ids);
        assertThat(first.get("result").get("snapshotsDeleted").asInt()).as("%s", first).isEqualTo(2 * volumes.size());
        assertThat(freed(first)).as("the workers freed exactly the two replaced MiBs of each volume: %s", first.get("log"))
                .isEqualTo(2L * volumes.size() * REGION_BLOCKS);
        long compacted = 0;
        for (ServerProcess w : workers) {
            compacted += inLog(w, 2);
        }
        assertThat(compacted).as("the workers' compactions after their sweeps gave back bytes of the freed blocks").isPositive();
        assertOnlyNewest();
        assertRetainedRestore("after the first GC run (and the workers' compactions)");
        // the freed content again (its fingerprints were forgotten: stored anew, never a freed PBN)
        Path freedContent = slice(volumes.get(0).generations().get(0).image(), MIB, 2 * MIB, "dw-freed.img");
        BackupSummary again = backup("dw-freed", freedContent, "state-freed");
        assertThat(again.newBlocks()).as("the freed MiBs of dw-a are stored again: %s", again).isEqualTo(2L * REGION_BLOCKS);
        retained.add(new Committed("dw-freed", again.snapshotId(), freedContent));
        assertRetainedRestore("after a backup of freed content");
        // fsck of a data=workers master: each worker's GC counts against the catalog, online (ClusterCountsCheck)
        JsonNode fsck = master.runJob("/api/v1/gc/fsck", Duration.ofMinutes(3));
        assertThat(fsck.get("state").asText()).as("fsck: %s", fsck).isEqualTo("succeeded");
        assertThat(fsck.get("result").get("clean").asBoolean()).as("fsck after the GC run and a backup of freed content: %s", fsck)
                .isTrue();
        long t2 = System.nanoTime();

        workerKilledMidBackup(ids);
        long t3 = System.nanoTime();

        masterKilledDuringGc(ids);
        long t4 = System.nanoTime();
        System.out.printf("[e2e] data on workers: start %.1f s, generations and first GC %.1f s, worker kill %.1f s, master kills %.1f s,"
                + " total %.1f s%n", (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, (t4 - t3) / 1e9, (t4 - t0) / 1e9);
    }

    /**
     * Generation 3 of both volumes; then a fresh 16 MiB image goes to one storing worker; once that
     * worker's range data grew by a fifth of it, the worker is SIGKILLed. The backup fails naming it,
     * with nothing committed (or it had completed). Started again on its data directory, it registers
     * at epoch 2 and serves its range; the backup run again succeeds; a GC run: both workers SWEPT,
     * each volume's replaced MiB 3 (and any block the failed backup left unreferenced) freed; every
     * retained snapshot restores.
     */
    private void workerKilledMidBackup(List<Long> ids) throws Exception {
        generation(3); // before the kill: generation 2's expiry estimate is then short
        int size = 16 * MIB;
        Path fresh = VolumeImage.generate(60, size).fill(0, size, Content.RANDOM).writeTo(work.resolve("dw-fresh.img"));
        long[] before = new long[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            before[i] = workers.get(i).rangeDataLogBytes();
        }
        AgentProcess.Running run = agent.start(AgentProcess.backupArgs(master, "dw-fresh", fresh,
                Files.createDirectories(work.resolve("state-fresh")), "--block-size", String.valueOf(BLOCK)));
        int victim = -1;
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (victim < 0 && run.isAlive() && System.nanoTime() < deadline) {
            for (int i = 0; i < WORKERS && victim < 0; i++) {
                if (workers.get(i).rangeDataLogBytes() - before[i] > size / 5) {
                    victim = i;
                }
            }
            Thread.sleep(5);
        }
        boolean inFlight = run.isAlive();
        if (victim < 0) { // the backup ended first: kill the worker that grew most
            victim = workers.get(0).rangeDataLogBytes() - before[0] >= workers.get(1).rangeDataLogBytes() - before[1] ? 0 : 1;
        }
        String node = "worker-" + (victim + 1);
        ServerProcess killed = workers.get(victim);
        assertThat(killed.kill()).as(node + " ran until the kill").isTrue();
        AgentResult r = run.await();
        System.out.println("[e2e] data on workers: " + node + " killed " + (inFlight ? "while the backup ran" : "after the backup ended")
                + "; agent " + (r.succeeded() ? "committed" : "failed: " + r.stderrLines()));
        if (r.succeeded()) {
            retained.add(new Committed("dw-fresh", BackupSummary.parse(r).snapshotId(), fresh));
        } else {
            List<String> lines = r.stderrLines();
            assertThat(lines.get(lines.size() - 1)).as("the agent names the lost worker: %s", r).startsWith("holdfast-agent: error:")
                    .contains(node);
            assertThat(lines).as("no stack trace: %s", r).noneMatch(l -> l.startsWith("\tat "));
            assertThat(master.get("/api/v1/volumes/dw-fresh").statusCode()).as("nothing of the failed backup is committed").isEqualTo(404);
        }
        awaitWorkers(node + " lost", l -> "lost".equals(byNode(l, node).get("state").asText()));

        killed.start();
        awaitWorkers(node + " up again at epoch 2, serving its range", l -> allUp(l) && byNode(l, node).get("epoch").asLong() == 2
                && "serving".equals(byNode(l, node).path("rangeData").path("state").asText()));
        BackupSummary rerun = backup("dw-fresh", fresh, "state-fresh-again");
        retained.removeIf(c -> c.volume().equals("dw-fresh"));
        retained.add(new Committed("dw-fresh", rerun.snapshotId(), fresh));
        assertRetainedRestore("after " + node + "'s SIGKILL and restart");

        awaitExpiry(2);
        JsonNode second = gcRun("GC run after the worker's restart", ids);
        assertThat(freed(second)).as("at least each volume's replaced MiB 3 is freed: %s", second.get("log"))
                .isGreaterThanOrEqualTo((long) volumes.size() * REGION_BLOCKS);
        assertOnlyNewest();
        assertRetainedRestore("after the GC run that followed " + node + "'s restart");
    }

    /**
     * Generation 4 replaces MiB 1 of each volume again; once generation 3 expired, a GC run is asked
     * for and the master SIGKILLed as soon as its job log says retention deleted the snapshots (or at
     * once if the run ended first). Restarted on its data directory, the workers register again; the
     * interrupted job is failed; the next GC run sweeps both workers, generation 3 is gone, the
     * workers' own logs count generation 3's replaced MiBs freed (in the killed run or this one), and
     * every retained snapshot restores.
     */
    private void masterKilledDuringGc(List<Long> ids) throws Exception {
        generation(4);
        awaitExpiry(3);
        long[] freedBefore = new long[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            freedBefore[i] = inLog(workers.get(i), 1);
        }
        HttpResponse<String> asked = master.call("POST", "/api/v1/gc/runs", null);
        assertThat(asked.statusCode()).as(asked.body()).isEqualTo(202);
        String location = asked.headers().firstValue("Location").orElseThrow();
        JsonNode job = json(master.get(location), 200);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!job.get("log").toString().contains("snapshots deleted") && !ended(job) && System.nanoTime() < deadline) {
            job = json(master.get(location), 200);
        }
        assertThat(master.kill()).as("the master ran until the kill").isTrue();
        System.out.println("[e2e] data on workers: master killed during GC, its job then " + job.get("state").asText() + ": " + job.get("log"));

        master.start();
        JsonNode back = awaitWorkers("up again after the master's restart", l -> l.size() == WORKERS && allUp(l)
                && StreamSupport.stream(l.spliterator(), false).allMatch(w -> "serving".equals(w.path("rangeData").path("state").asText())));
        JsonNode interrupted = json(master.get(location), 200);
        if (!ended(job)) {
            assertThat(interrupted.get("state").asText()).as("the killed run: %s", interrupted).isEqualTo("failed");
        }
        JsonNode third = gcRun("GC run after the master's restart", ids);
        long freed = 0;
        for (int i = 0; i < WORKERS; i++) {
            freed += inLog(workers.get(i), 1) - freedBefore[i];
        }
        System.out.println("[e2e] data on workers: the workers freed " + freed + " blocks in the killed run and the next; " + back);
        assertThat(freed).as("generation 3's replaced MiB 1 of each volume is freed on the workers: %s", third.get("log"))
                .isGreaterThanOrEqualTo((long) volumes.size() * REGION_BLOCKS);
        assertOnlyNewest();
        assertRetainedRestore("after the master's SIGKILL during GC and the next GC run");
        masterHaltedMidCommit(ids);
    }

    /**
     * The master halts in a commit (kill point {@code commit.afterCatalogBatch}, armed for its next
     * start: the snapshot is durable in the catalog, its reference counts not yet routed to the
     * workers). A new volume with gen 0 of dw-a: MiB 3's first content was freed, so it is stored
     * anew, the rest is found. Restarted, the master re-drives the commit through its outbox; once
     * the grace of the stored blocks has passed, a GC run sweeps both workers, and the snapshot, whose
     * new blocks only the re-driven counts keep, restores with every other retained one.
     */
    private void masterHaltedMidCommit(List<Long> ids) throws Exception {
        master.close();
        master.armKillPoint(KillPoints.COMMIT_AFTER_CATALOG_BATCH, 1);
        master.start();
        awaitWorkers("up again after the master's restart, armed", l -> l.size() == WORKERS && allUp(l));
        Path image = volumes.get(0).generations().get(0).image();
        AgentResult halted = agent.run(AgentProcess.backupArgs(master, "dw-after", image, Files.createDirectories(work.resolve("state-after")),
                "--block-size", String.valueOf(BLOCK)));
        lastWrite = System.currentTimeMillis();
        assertThat(master.awaitKillPoint(Duration.ofMinutes(2))).as("the master halted at commit.afterCatalogBatch: %s\n%s", halted,
                master.diagnostics()).isTrue();
        assertThat(halted.succeeded()).as("the agent got no acknowledgement: %s", halted).isFalse();

        master.start();
        awaitWorkers("up again after the master's halt mid-commit", l -> l.size() == WORKERS && allUp(l));
        List<String> listed = new ArrayList<>();
        json(master.get("/api/v1/volumes/dw-after/snapshots"), 200).forEach(n -> listed.add(n.get("id").asText()));
        assertThat(listed).as("the snapshot whose catalog batch was durable").hasSize(1);
        retained.add(new Committed("dw-after", listed.get(0), image));
        long wait = lastWrite + GRACE.toMillis() + 1000 - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait); // past the grace of the blocks the halted backup stored: only their counts keep them now
        }
        gcRun("GC run after the master's halt mid-commit", ids);
        assertOnlyNewest();
        assertRetainedRestore("after the master's halt mid-commit and a GC run");
    }

    /**
     * Generation {@code g} of every volume, one agent process per volume at once; from generation 1
     * on, MiB {@code (g - 1) % 3 + 1} of each is replaced by new data (an incremental backup).
     */
    private void generation(int g) throws Exception {
        List<AgentProcess.Running> runs = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        for (Volume v : volumes) {
            if (g > 0) {
                v.image().fill(((g - 1) % 3 + 1) * MIB, MIB, Content.RANDOM);
            }
            Path file = v.image().writeTo(work.resolve(v.name() + "-" + g + ".img"));
            files.add(file);
            runs.add(agent.start(AgentProcess.backupArgs(master, v.name(), file, v.state(), "--block-size", String.valueOf(BLOCK))));
        }
        for (int i = 0; i < volumes.size(); i++) {
            Volume v = volumes.get(i);
            AgentResult r = runs.get(i).await();
            assertThat(r.succeeded()).as("%s generation %d: %s\n%s", v.name(), g, r, master.diagnostics()).isTrue();
            BackupSummary s = BackupSummary.parse(r);
            System.out.println("[e2e] data on workers, " + v.name() + " generation " + g + ": " + s);
            if (g > 0) {
                assertThat(s.newBlocks()).as("%s generation %d stores its new MiB: %s", v.name(), g, s).isEqualTo(REGION_BLOCKS);
                retained.remove(v.generations().get(g - 1));
            }
            Committed c = new Committed(v.name(), s.snapshotId(), files.get(i));
            v.generations().add(c);
            retained.add(c);
        }
        lastWrite = System.currentTimeMillis();
    }

    /** Waits until generation {@code g} of every volume has expired (its recorded expiry) and the last backup's grace has passed. */
    private void awaitExpiry(int g) throws InterruptedException {
        long until = lastWrite + GRACE.toMillis();
        for (Volume v : volumes) {
            JsonNode hold = json(master.get("/api/v1/volumes/" + v.name() + "/snapshots/" + v.generations().get(g).id() + "/hold"), 200);
            until = Math.max(until, hold.get("expiryMillis").asLong());
        }
        long wait = until + 1000 - System.currentTimeMillis();
        System.out.printf("[e2e] data on workers: %.1f s to wait for the expiry of generation %d%n", Math.max(0, wait) / 1e3, g);
        assertThat(wait).as("keep-last=1's expiry estimate is a few seconds here").isLessThan(60_000);
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    /** A GC run over REST; it must succeed and every worker of {@code ids} report SWEPT in its log. Answers the job. */
    private JsonNode gcRun(String what, List<Long> ids) {
        JsonNode job = master.runJob("/api/v1/gc/runs", Duration.ofMinutes(3));
        System.out.println("[e2e] data on workers, " + what + ": " + job.get("result") + " " + job.get("log"));
        assertThat(job.get("state").asText()).as("%s: %s\n%s", what, job, master.diagnostics()).isEqualTo("succeeded");
        Map<Long, String> states = new HashMap<>();
        for (JsonNode line : job.get("log")) {
            Matcher s = WORKER_SWEEP.matcher(line.asText());
            if (s.find()) {
                states.put(Long.parseLong(s.group(1)), s.group(2));
            }
        }
        for (long id : ids) {
            assertThat(states.get(id)).as("%s: worker %d swept its range: %s", what, id, job.get("log")).isEqualTo("SWEPT");
        }
        return job;
    }

    /** The blocks the workers freed in a GC job, from its log lines {@code worker sweep of worker N: SWEPT, F blocks freed}. */
    private static long freed(JsonNode job) {
        long freed = 0;
        for (JsonNode line : job.get("log")) {
            Matcher s = WORKER_SWEEP.matcher(line.asText());
            if (s.find() && s.group(3) != null) {
                freed += Long.parseLong(s.group(3));
            }
        }
        return freed;
    }

    /**
     * A sum over a worker process's range sweeps since it started, from its log lines {@code range
     * sweep of PBNs ...: F blocks freed; ...; compaction gave back B bytes}: {@code group} 1 the blocks
     * freed, 2 the bytes its compactions gave back.
     */
    private static long inLog(ServerProcess worker, int group) {
        Matcher s = RANGE_SWEEP.matcher(worker.log());
        long sum = 0;
        while (s.find()) {
            sum += s.group(group) == null ? 0 : Long.parseLong(s.group(group));
        }
        return sum;
    }

    private static boolean ended(JsonNode job) {
        return List.of("succeeded", "failed", "cancelled").contains(job.get("state").asText());
    }

    /** Retention keep-last=1 left each generational volume its newest generation only. */
    private void assertOnlyNewest() {
        for (Volume v : volumes) {
            List<String> listed = new ArrayList<>();
            json(master.get("/api/v1/volumes/" + v.name() + "/snapshots"), 200).forEach(n -> listed.add(n.get("id").asText()));
            List<Committed> gens = v.generations();
            assertThat(listed).as("%s keeps its newest generation", v.name()).containsExactly(gens.get(gens.size() - 1).id());
        }
    }

    /** Every retained snapshot restores byte for byte, over the wire in this JVM, its blocks read from the workers. */
    private void assertRetainedRestore(String when) throws IOException {
        try (WireProbe p = new WireProbe(master.ingestPort(), master.clientTls(), master.agentToken())) {
            p.hello();
            for (Committed c : retained) {
                long seq = SnapshotId.parse(c.id(), new VolumeId(c.volume())).sequence();
                byte[] restored = p.restore(c.volume(), seq);
                assertThat(Arrays.mismatch(restored, Files.readAllBytes(c.image())))
                        .as("%s: %s@%s restores byte for byte (first difference at byte, -1 = none)", when, c.volume(), c.id()).isEqualTo(-1);
            }
        }
    }

    /** {@code len} bytes of {@code image} from {@code from}, as a volume image file. */
    private Path slice(Path image, int from, int len, String name) throws IOException {
        return Files.write(work.resolve(name), Arrays.copyOfRange(Files.readAllBytes(image), from, from + len));
    }

    private BackupSummary backup(String volume, Path source, String state) throws Exception {
        BackupSummary s = agent.backup(master, volume, source, Files.createDirectories(work.resolve(state)), "--block-size",
                String.valueOf(BLOCK));
        lastWrite = System.currentTimeMillis();
        System.out.println("[e2e] data on workers, " + volume + ": " + s);
        return s;
    }

    /**
     * One worker process named {@code node}, connecting from {@code host}, data under {@code work/node},
     * with the test's grace and 1 MB data logs.
     */
    private ServerProcess startWorker(int clusterPort, Path tokenFile, String node, String host) {
        Map<String, String> p = new HashMap<>(SMALL_ENGINE);
        p.put("holdfast.cluster.role", "worker");
        p.put("holdfast.cluster.host", host);
        p.put("holdfast.cluster.master", "127.0.0.2:" + clusterPort);
        p.put("holdfast.cluster.master-fingerprint", master.fingerprint().toString());
        p.put("holdfast.cluster.token-file", tokenFile.toString());
        p.put("holdfast.store.s3.node", node);
        p.put("holdfast.gc.grace", GRACE.toSeconds() + "s");
        // small logs and a high threshold: the compaction after each range sweep rewrites or deletes logs, and the restores read them
        p.put("holdfast.store.log-roll-size", "1MB");
        p.put("holdfast.gc.compaction-threshold", "0.8");
        return ServerProcess.startWithHeap(work.resolve(node), "sungem", p, LOGS, "256m");
    }

    private JsonNode awaitWorkers(String what, Predicate<JsonNode> done) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = json(master.get("/api/v1/cluster/workers"), 200);
            if (done.test(last)) {
                return last;
            }
            ServerProcess.sleep(200);
        }
        throw new AssertionError("workers not " + what + " after 60 s: " + last + "\n" + master.diagnostics());
    }

    private static boolean allUp(JsonNode list) {
        return StreamSupport.stream(list.spliterator(), false).allMatch(w -> "up".equals(w.get("state").asText()));
    }

    private static JsonNode byNode(JsonNode list, String node) {
        for (JsonNode w : list) {
            if (w.get("nodeName").asText().equals(node)) {
                return w;
            }
        }
        throw new AssertionError(node + " not listed: " + list);
    }

    private static JsonNode json(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
