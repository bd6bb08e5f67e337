package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.gc.GcRebuildToolAccess;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.cluster.DataOnWorkersCluster;
import org.holdfast.server.ingest.cluster.GcDeltaSenders;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerGcImport;
import org.holdfast.server.ingest.cluster.WorkerGcMetadata;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.ingest.cluster.WorkerRangeSweep;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's lost GC metadata rebuilt from the master's catalog, end to end in this JVM (master with
 * {@code holdfast.cluster.data=workers} and two workers as Spring contexts over real ports and
 * RocksDB): after backups, a GC cycle and a freeing sweep, each worker's {@code range-data/gc} is
 * lost and recreated (counts-lost); {@code gc-rebuild --worker N --out FILE} on the stopped master
 * and {@code worker-gc-import} on each stopped worker bring back the counts it had; a volume deleted
 * after the export reaches the workers as deltas above the mark and is applied; the next cycle
 * sweeps the workers, frees the deleted volume's blocks and every retained snapshot restores; then,
 * with no import since, a new export carries each worker's routed mark and {@code worker-fsck}
 * compares the counts (clean) although the workers' marks are below the file's.
 */
class WorkerGcImportTest {
    private static final int BS = 4096;
    private static final int N = 32;
    private static final List<String> NODES = List.of("iw-1", "iw-2");

    @TempDir
    Path data;

    private DataOnWorkersCluster cluster;

    @AfterEach
    void close() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static byte[] random(long seed) {
        byte[] b = new byte[N * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    private Path gcDir(int i) {
        return data.resolve(NODES.get(i)).resolve("range-data").resolve("gc");
    }

    /** rc/pins of every slot holding a reference or a pin, read from a stopped worker's GC metadata. */
    private static Map<Long, String> counts(Path gc, PbnRange range) {
        Map<Long, String> out = new TreeMap<>();
        try (BoscPipeline p = BoscPipeline.open(gc, BoscSettings.defaults(), range)) {
            p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> {
                if (rc > 0 || pins > 0) {
                    out.put(pbn, rc + "/" + pins);
                }
            });
        }
        return out;
    }

    private record Run(int code, String out, String err) {
    }

    private static Run exportTool(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = GcRebuildToolAccess.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static Run importTool(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = WorkerGcImportTool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static List<String> listing(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void importOfExportedCounts_afterGcMetadataLost_restoresCounts_appliesLaterDeltas_sweepsFreeOnlyTheDeleted() throws Exception {
        cluster = new DataOnWorkersCluster(data, DataOnWorkersCluster.GC, NODES.toArray(String[]::new)).start();
        byte[] old = random(31);
        byte[] other2 = random(34);
        long oldSeq;
        long otherSeq;
        try (AgentDriver agent = cluster.agent()) {
            oldSeq = agent.backup("old", old, BS, true).sequence();
            agent.backup("other", random(33), BS, true);
            otherSeq = agent.backup("other", other2, BS, true).sequence();
            agent.backup("gone", random(35), BS, true);
        }
        Thread.sleep(50); // the grace (1 ms) of the backups' protection passes
        GcService.CycleReport first = cluster.master().getBean(GcService.class).runCycle();
        assertThat(first.snapshotsDeleted()).as("keep-last=1 deletes other@1").isEqualTo(1);
        long[] ids = new long[NODES.size()];
        PbnRange[] ranges = new PbnRange[NODES.size()];
        for (int i = 0; i < NODES.size(); i++) {
            var a = cluster.workers().get(i).getBean(WorkerConnector.class).status().assignment();
            ids[i] = a.workerId();
            ranges[i] = a.range();
        }
        GcDeltaSenders senders = cluster.master().getBean(GcDeltaSenders.class);
        await().atMost(Duration.ofSeconds(20)).until(() -> Arrays.stream(ids).allMatch(id -> senders.pending(id) == 0));

        // each worker's range-data/gc is lost; at its next start the worker recreates it and marks it counts-lost
        // (done here as WorkerConnector does at the start, without a restart: each context start costs seconds)
        long[] handedOut = new long[NODES.size()]; // what WorkerConnector checks a fresh GC directory against
        for (int i = 0; i < NODES.size(); i++) {
            handedOut[i] = cluster.workers().get(i).getBean(WorkerRangeData.class).store().nextPbn() - ranges[i].first();
        }
        cluster.stopWorkers();
        List<Map<Long, String>> before = new ArrayList<>();
        for (int i = 0; i < NODES.size(); i++) {
            before.add(counts(gcDir(i), ranges[i]));
            org.springframework.util.FileSystemUtils.deleteRecursively(gcDir(i));
            long storedPbns = handedOut[i];
            try (WorkerGcMetadata fresh = new WorkerGcMetadata(gcDir(i), BoscSettings.defaults())) {
                fresh.checkHistoryAgainst(r -> storedPbns);
                fresh.claim(ranges[i]);
            }
        }
        assertThat(before.get(0).size() + before.get(1).size()).as("old, other@2 and gone: 96 referenced blocks").isEqualTo(3 * N);
        Run live = exportTool("--data-dir", data.resolve("master").toString(), "--worker", Long.toString(ids[0]), "--out",
                data.resolve("live.counts").toString());
        assertThat(live.code()).as("the master still runs").isEqualTo(3);
        assertThat(live.err()).contains("in use");
        assertThat(data.resolve("live.counts")).doesNotExist();
        cluster.stopMaster();
        for (int i = 0; i < NODES.size(); i++) {
            assertThat(gcDir(i).resolve(WorkerGcMetadata.COUNTS_LOST).toFile().exists()).as(NODES.get(i) + " counts lost")
                    .isEqualTo(handedOut[i] > 0);
        }

        // export on the stopped master
        Path[] files = new Path[NODES.size()];
        long[] marks = new long[NODES.size()];
        for (int i = 0; i < NODES.size(); i++) {
            files[i] = data.resolve("worker-" + ids[i] + ".counts");
            Run r = exportTool("--data-dir", data.resolve("master").toString(), "--worker", Long.toString(ids[i]), "--out",
                    files[i].toString(), "--json");
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("\"result\":\"exported\"", "\"records\":" + before.get(i).size());
            assertThat(r.err()).contains("ETA");
            marks[i] = WorkerCountsFile.verify(files[i]).mark();
        }
        Run own = exportTool("--data-dir", data.resolve("master").toString());
        assertThat(own.code()).as("a rebuild of the master's own gc/").isEqualTo(3);
        assertThat(own.err()).contains("--worker N --out FILE", "nothing was changed");
        Run unknown = exportTool("--data-dir", data.resolve("master").toString(), "--worker", "99", "--out",
                data.resolve("w99.counts").toString());
        assertThat(unknown.code()).isEqualTo(3);
        assertThat(unknown.err()).contains("no worker 99");
        assertThat(data.resolve("w99.counts")).doesNotExist();

        // after the export: the master runs again and deletes "gone", whose releases wait in the outbox above the marks
        cluster.startMaster();
        cluster.master().getBean(GcService.class).deleteVolume(new VolumeId("gone"), VolumeGate.NONE);

        // refusals on the stopped workers change nothing
        int held = handedOut[0] > 0 ? 0 : 1; // a worker that held blocks (its gc/ carries counts-lost)
        int otherWorker = 1 - held;
        List<String> untouched = listing(gcDir(held).getParent());
        Run foreign = importTool("--data-dir", data.resolve(NODES.get(held)).toString(), "--file", files[otherWorker].toString());
        assertThat(foreign.code()).isEqualTo(3);
        assertThat(foreign.err()).contains("another worker's", "nothing was changed");
        Path truncated = Files.write(data.resolve("truncated.counts"),
                Arrays.copyOf(Files.readAllBytes(files[held]), (int) Files.size(files[held]) - 10));
        Run cut = importTool("--data-dir", data.resolve(NODES.get(held)).toString(), "--file", truncated.toString());
        assertThat(cut.code()).isEqualTo(3);
        assertThat(cut.err()).contains("truncated", "nothing was changed");
        assertThat(listing(gcDir(held).getParent())).as("nothing changed by the refusals").isEqualTo(untouched);
        assertThat(gcDir(held).resolve(WorkerGcMetadata.COUNTS_LOST)).exists();

        // import on each stopped worker: the counts it had before the loss, the mark, no counts-lost
        for (int i = 0; i < NODES.size(); i++) {
            Run r = importTool("--data-dir", data.resolve(NODES.get(i)).toString(), "--file", files[i].toString(), "--grace", "1ms");
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("result: imported");
            assertThat(counts(gcDir(i), ranges[i])).as(NODES.get(i) + " RC and pins per PBN as before the loss").isEqualTo(before.get(i));
            try (BoscPipeline p = BoscPipeline.open(gcDir(i), BoscSettings.defaults(), ranges[i])) {
                assertThat(p.lastOpId()).isEqualTo(marks[i]);
            }
            assertThat(gcDir(i).resolve(WorkerGcMetadata.COUNTS_LOST)).doesNotExist();
            assertThat(gcDir(i).getParent().resolve(WorkerGcImport.BUILD_DIR)).doesNotExist();
        }

        // the workers start: the deltas above the marks (gone's releases) are applied; the cycle sweeps and frees gone's blocks
        cluster.startWorkers();
        await().atMost(Duration.ofSeconds(20)).until(() -> Arrays.stream(ids).allMatch(id -> senders().pending(id) == 0));
        List<String> running = listing(gcDir(held).getParent());
        Run whileRunning = importTool("--data-dir", data.resolve(NODES.get(held)).toString(), "--file", files[held].toString());
        assertThat(whileRunning.code()).as("the worker runs").isEqualTo(3);
        assertThat(whileRunning.err()).contains("in use", "no imported metadata was swapped in");
        assertThat(listing(gcDir(held).getParent())).isEqualTo(running);
        Thread.sleep(50); // the import's grace (1 ms) passes
        cluster.master().getBean(GcService.class).runCycle();
        long freed = 0;
        for (int i = 0; i < NODES.size(); i++) {
            WorkerRangeSweep.Progress p = cluster.workers().get(i).getBean(WorkerConnector.class).rangeSweep().progress();
            assertThat(p.last()).as(NODES.get(i) + " swept, not refused: " + p.lastFailure()).isNotNull();
            freed += p.last().sweep().freed();
        }
        assertThat(freed).as("at least gone's blocks").isGreaterThanOrEqualTo(N);
        try (AgentDriver agent = cluster.agent()) {
            assertThat(agent.restore("old", oldSeq).image()).isEqualTo(old);
            assertThat(agent.restore("other", otherSeq).image()).isEqualTo(other2);
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> Arrays.stream(ids).allMatch(id -> senders().pending(id) == 0));
        cluster.stopWorkers();
        int referenced = 0;
        for (int i = 0; i < NODES.size(); i++) {
            Map<Long, String> now = counts(gcDir(i), ranges[i]);
            referenced += now.size();
            assertThat(before.get(i)).as("every block still referenced was referenced before").containsAllEntriesOf(now);
        }
        assertThat(referenced).as("gone's releases were applied, not taken for replays").isEqualTo(2 * N);

        // normal operation, no import since: a new export carries each worker's routed mark, and worker-fsck compares the counts
        // although every worker's mark is below the file's (the master's last operations routed it nothing)
        cluster.stopMaster();
        for (int i = 0; i < NODES.size(); i++) {
            Path again = data.resolve("again-" + ids[i] + ".counts");
            Run e = exportTool("--data-dir", data.resolve("master").toString(), "--worker", Long.toString(ids[i]), "--out",
                    again.toString(), "--json");
            assertThat(e.code()).as(e.err()).isZero();
            WorkerCountsFile.Header h = WorkerCountsFile.verify(again);
            assertThat(h.outboxEntries()).as("drained before the workers stopped").isZero();
            Run check = fsckTool("--data-dir", data.resolve(NODES.get(i)).toString(), "--counts", again.toString(), "--scratch-dir",
                    data.toString(), "--json");
            if (i == held) {
                assertThat(h.routedMarkKnown()).as("deltas were routed to " + NODES.get(i) + " since the master's upgrade").isTrue();
            }
            if (h.routedMarkKnown()) {
                assertThat(h.mark()).as("the file's mark is the master's last operation's highest id").isGreaterThan(h.routedMark());
                assertThat(check.code()).as(check.out() + check.err()).isZero();
                assertThat(check.out()).contains("\"result\":\"clean\"", "\"marks\":\"all-routed-applied\"", "\"rcBelow\":{\"count\":0",
                        "\"routedMark\":" + h.routedMark());
            } else {
                assertThat(check.code()).as("nothing ever routed to this worker: unknown, not 0: " + check.out()).isEqualTo(4);
            }
        }
    }

    private static Run fsckTool(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = WorkerFsckTool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Duration.ZERO);
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private GcDeltaSenders senders() {
        return cluster.master().getBean(GcDeltaSenders.class);
    }
}
