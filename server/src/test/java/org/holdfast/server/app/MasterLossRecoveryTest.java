package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CatalogBackupJobs;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.gc.GcRebuildToolAccess;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.gc.WorkerCountsFences;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.cluster.DataOnWorkersCluster;
import org.holdfast.server.ingest.cluster.OwedForgets;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerRangeSweep;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.FileSystemUtils;

/**
 * A lost master of a data=workers cluster recovered from a catalog backup, end to end in this JVM
 * (master and one worker as Spring contexts, real ports and RocksDB): after the backup the lost
 * master deleted two volumes (the worker freed one's blocks, the other shares every block with a
 * kept volume) and committed a new one. Restored, the master fences the worker: deleting the shared
 * volume again, which without the fence would drop the kept volume's counts to 0 and free its
 * blocks, frees nothing. Once the counts are rebuilt from the restored catalog (export, import) the
 * worker's registration lifts the fence (cluster version 7: it reports the imported mark) and it
 * sweeps again, frees the lost snapshot's blocks (a leak, reclaimed), the kept volume restores byte
 * for byte, and verify names the volume whose blocks were freed damaged.
 */
class MasterLossRecoveryTest {
    private static final int BS = DataOnWorkersCluster.BS;
    private static final int N = 16;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path data;

    private DataOnWorkersCluster cluster;

    @AfterEach
    void close() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private record Run(int code, String out, String err) {
    }

    private interface Tool {
        int run(String[] args, PrintStream out, PrintStream err, Clock clock);
    }

    private static Run tool(Tool t, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = t.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                Clock.systemUTC());
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private WorkerRangeSweep.Progress sweepProgress() {
        return cluster.workers().get(0).getBean(WorkerConnector.class).rangeSweep().progress();
    }

    @Test
    void restoredMaster_fencesTheWorkerUntilItsCountsAreRebuilt_thenSweepsFreeOnlyWhatNothingReferences() throws Exception {
        Path backups = data.resolve("catalog-backups");
        cluster = new DataOnWorkersCluster(data, new DataOnWorkersCluster.Options(DataOnWorkersCluster.GC.all(),
                List.of("--holdfast.gc.default-retention=keep-last=1", "--holdfast.catalog.backup.directory=" + backups)), "ml-1").start();
        byte[] kept = DataOnWorkersCluster.random(1, N);
        byte[] freedLater = DataOnWorkersCluster.random(3, N);
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("va", kept, BS, true);
            agent.backup("vb", kept, BS, true); // every block shared with va
            agent.backup("vd", freedLater, BS, true);
        }
        assertThat(pbns(cluster.master(), "vb")).as("vb's blocks are va's").isEqualTo(pbns(cluster.master(), "va"));
        cluster.awaitDeltasDelivered();
        CatalogBackupJobs jobs = cluster.master().getBean(CatalogBackupJobs.class);
        jobs.submit("test");
        await().atMost(Duration.ofSeconds(30)).until(() -> jobs.list().size() == 1);

        // after the backup: vb and vd deleted (the worker drops their references), vc committed; vd's blocks are freed
        GcService gc = cluster.master().getBean(GcService.class);
        gc.deleteVolume(new VolumeId("vb"), VolumeGate.NONE);
        gc.deleteVolume(new VolumeId("vd"), VolumeGate.NONE);
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("vc", DataOnWorkersCluster.random(4, N), BS, true);
        }
        cluster.awaitDeltasDelivered();
        Thread.sleep(50); // the backups' grace (1 ms) passes
        cluster.gcCycle();
        assertThat(sweepProgress().last()).as("swept: " + sweepProgress().lastFailure()).isNotNull();
        assertThat(sweepProgress().last().sweep().freed()).as("vd's blocks").isEqualTo(N);
        long workerId = cluster.workerId(0);
        cluster.close();

        // the master's disk is lost; its catalog comes back from the backup
        Path masterDir = data.resolve("master");
        FileSystemUtils.deleteRecursively(masterDir);
        Files.createDirectories(masterDir);
        Run restored = tool(CatalogRestoreTool::run, "--data-dir", masterDir.toString(), "--from", backups.toString());
        assertThat(restored.code()).as(restored.err() + restored.out()).isZero();
        assertThat(restored.out()).contains("workers [" + workerId + "] are FENCED", "--counts-imported",
                "worker ids up to " + (workerId + 64) + " are retired");
        assertThat(restored.out()).contains("workers [" + workerId + "] are distrusted for dedup across ranges");
        assertThat(new OwedForgets(masterDir.resolve(OwedForgets.DIRECTORY)).distrusted(workerId))
                .as("the forgets owed to it are not in the backup: its answers naming other ranges are misses").isTrue();

        // restored, the catalog holds vb again; deleting it again releases va's blocks a second time on the worker
        cluster.startMaster();
        cluster.startWorkers();
        cluster.master().getBean(GcService.class).deleteVolume(new VolumeId("vb"), VolumeGate.NONE);
        cluster.awaitDeltasDelivered();
        Thread.sleep(50);
        List<String> lines = cluster.gcCycle().toString().lines().toList();
        assertThat(sweepProgress().last()).as("the fenced worker is never asked to sweep: " + lines).isNull();
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("va", 1).image()).isEqualTo(kept);
        }
        cluster.close();

        // the counts rebuilt from the restored catalog; the worker's next registration lifts the fence with the imported file
        Path counts = data.resolve("w.counts");
        Run early = tool(GcRebuildToolAccess::run, "--data-dir", masterDir.toString(), "--worker", Long.toString(workerId),
                "--counts-imported", counts.toString());
        assertThat(early.code()).as("no counts file yet").isEqualTo(3);
        Run export = tool(GcRebuildToolAccess::run, "--data-dir", masterDir.toString(), "--worker", Long.toString(workerId), "--out",
                counts.toString());
        assertThat(export.code()).as(export.err()).isZero();
        Run imported = tool(WorkerGcImportTool::run, "--data-dir", data.resolve("ml-1").toString(), "--file", counts.toString(),
                "--grace", "1ms");
        assertThat(imported.code()).as("above every delta the worker applied: " + imported.err()).isZero();

        cluster.startMaster();
        assertThat(new WorkerCountsFences(cluster.master().getBean(MetadataDb.class)).of(workerId)).as("fenced until it registers")
                .isNotNull();
        cluster.startWorkers();
        await().atMost(Duration.ofSeconds(20)).until(() -> new WorkerCountsFences(cluster.master().getBean(MetadataDb.class))
                .of(workerId) == null);
        Thread.sleep(50); // the import's grace (1 ms) passes
        cluster.gcCycle();
        assertThat(sweepProgress().last()).as("swept: " + sweepProgress().lastFailure()).isNotNull();
        assertThat(sweepProgress().last().sweep().freed()).as("vc's blocks, lost with its snapshot: a leak, reclaimed").isEqualTo(N);
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("va", 1).image()).isEqualTo(kept);
        }
        JsonNode verified = verify(cluster.master());
        assertThat(verified.get("damagedSnapshots").toString()).as(verified.toString()).contains("vd@1").doesNotContain("va");

        // verify marked vd's blocks bad: freed on the worker, still referenced by the restored vd@1: GC keeps every mark
        BadBlocks marks = cluster.master().getBean(DataStore.class).badBlocks();
        long[] lost = pbns(cluster.master(), "vd");
        assertThat(Arrays.stream(lost).allMatch(marks::isBad)).as("verify marked every block of vd@1").isTrue();
        assertThat(marks.count()).as("only vd's").isEqualTo(N);
        cluster.gcCycle();
        assertThat(sweepProgress().last()).as("swept: " + sweepProgress().lastFailure()).isNotNull();
        assertThat(marks.count()).as("not held by the worker, but vd@1 references them: kept").isEqualTo(N);
        // vd deleted: nothing references them any more; a later cycle drops the marks, and the health is UP again
        cluster.master().getBean(GcService.class).deleteVolume(new VolumeId("vd"), VolumeGate.NONE);
        cluster.awaitDeltasDelivered();
        Thread.sleep(50);
        cluster.gcCycle();
        cluster.gcCycle(); // the first may only prune vd's map entries
        assertThat(Arrays.stream(lost).noneMatch(marks::isBad)).as("freed, referenced by nothing: cleared").isTrue();
        assertThat(marks.isEmpty()).isTrue();
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("va", 1).image()).isEqualTo(kept);
        }
    }

    /** The PBNs of {@code volume}'s snapshot 1, in LBN order. */
    private static long[] pbns(ConfigurableApplicationContext master, String volume) {
        Catalog catalog = master.getBean(Catalog.class);
        VolumeRecord v = catalog.requireVolume(new VolumeId(volume));
        long[] out = new long[N];
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            c.startScan(1, 0, N);
            while (c.nextMapped()) {
                out[(int) c.lbn()] = c.pbn();
            }
        }
        return out;
    }

    /** Runs a full verify pass (POST /api/v1/verify), waits for its job and answers its result. */
    private static JsonNode verify(ConfigurableApplicationContext ctx) throws Exception {
        String port = ctx.getEnvironment().getProperty("local.server.port");
        String token = TestTokens.issue(ctx, Role.ADMIN);
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/verify"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"full\": true}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        URI job = URI.create("http://127.0.0.1:" + port + URI.create(r.headers().firstValue("Location").orElseThrow()).getPath());
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            JsonNode j = JSON.readTree(http.send(HttpRequest.newBuilder(job).header("Authorization", "Bearer " + token).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            if (j.get("state").asText().equals("succeeded")) {
                return j.get("result");
            }
            assertThat(j.get("state").asText()).as(j.toString()).isIn("queued", "running");
            assertThat(System.currentTimeMillis()).as("verify still running: " + j).isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
