package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;
import static org.holdfast.server.ingest.cluster.RangeBlocks.blocks;
import static org.holdfast.server.ingest.cluster.RangeBlocks.fps;

import com.github.luben.zstd.Zstd;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.server.api.ClusterController;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.DedupLinks;
import org.holdfast.server.ingest.cluster.RangeWorkerFailedException;
import org.holdfast.server.ingest.cluster.RemoteGcDeltas;
import org.holdfast.server.ingest.cluster.RemoteRangeStore;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.WorkerGcMetadata;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.mock.web.MockHttpServletRequest;

/**
 * A real worker process serves its range (data on workers, brick 3): a master and workers as Spring
 * contexts in this JVM, TLS on the cluster port (the worker pins the master's certificate). The
 * master stores blocks on a worker through {@link ClusterServer#rangeStores()} and reads them back
 * byte for byte, again after the worker restarts over the same data directory, and lists it
 * serving with its PBNs used and log bytes (from the worker's heartbeat); a second worker's
 * PBNs lie in its own range; a worker whose {@code range-data} was made for another range logs the
 * refusal once, refuses every data call, writes nothing there and stays registered. The master's GC
 * deltas ({@link ClusterServer#gcDeltas()}) are logged in the worker's {@code range-data/gc}, once.
 */
@ExtendWith(OutputCaptureExtension.class)
class WorkerRangeDataContextTest {
    @TempDir
    static Path data;
    private static ConfigurableApplicationContext master;
    private static String masterCluster;
    private static String fingerprint;
    private static Path tokenFile;
    /** The worker contexts running now, by node name. */
    private static final Map<String, ConfigurableApplicationContext> RUNNING = new java.util.concurrent.ConcurrentHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        int clusterPort = TestPorts.claim();
        master = new SpringApplicationBuilder(HoldfastServer.class).run(common(data.resolve("master"),
                "--holdfast.cluster.role=master", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.port=" + clusterPort,
                "--holdfast.cluster.heartbeat-interval=200ms"));
        masterCluster = "127.0.0.1:" + clusterPort;
        fingerprint = master.getBean(ServerCertificate.class).fingerprint().toString();
        String token = master.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("workers", Role.WORKER, VolumeScope.ALL, null, null),
                "test", "local").token();
        tokenFile = Files.writeString(data.resolve("worker.token"), token + "\n");
        worker("rd-1"); // shared by the tests: each context start takes seconds
    }

    private static String[] common(Path dir, String... more) {
        List<String> args = new ArrayList<>(List.of("--holdfast.data-dir=" + dir, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.store.min-free-space=0",
                "--spring.main.banner-mode=off"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    /** Starts worker {@code node} over {@code <data>/<node>} (TLS, the master's fingerprint pinned); returns once it is registered. */
    private static ConfigurableApplicationContext worker(String node) {
        ConfigurableApplicationContext w = new SpringApplicationBuilder(HoldfastServer.class).run(common(data.resolve(node),
                "--holdfast.cluster.role=worker", "--holdfast.cluster.host=127.0.0.1", "--holdfast.cluster.master=" + masterCluster,
                "--holdfast.cluster.master-fingerprint=" + fingerprint, "--holdfast.cluster.token-file=" + tokenFile,
                "--holdfast.store.s3.node=" + node));
        RUNNING.put(node, w);
        await().atMost(Duration.ofSeconds(30)).until(() -> w.getBean(WorkerConnector.class).status().connected()
                && rangeStore(w) != null);
        return w;
    }

    private static WorkerRecord assignment(ConfigurableApplicationContext w) {
        return w.getBean(WorkerConnector.class).status().assignment();
    }

    /** The master's end of {@code w}'s range store, null while its link is down. */
    private static RemoteRangeStore rangeStore(ConfigurableApplicationContext w) {
        WorkerRecord a = assignment(w);
        return a == null ? null : master.getBean(ClusterServer.class).rangeStores().up(a.workerId());
    }

    /** Worker {@code node} as GET /api/v1/cluster/workers lists it (the controller, as a viewer calls it). */
    private static ClusterController.WorkerItem listed(String node) {
        return master.getBean(ClusterController.class).workers(new MockHttpServletRequest()).stream().filter(i -> i.nodeName().equals(node))
                .findFirst().orElseThrow();
    }

    private static void stop(ConfigurableApplicationContext w) {
        w.close();
        RUNNING.values().remove(w);
    }

    @AfterAll
    static void stopAll() {
        new ArrayList<>(RUNNING.values()).forEach(WorkerRangeDataContextTest::stop);
        if (master != null) {
            master.close();
        }
    }

    private static Throwable failure(java.util.concurrent.CompletableFuture<?> call) {
        try {
            call.join();
        } catch (CompletionException e) {
            return e.getCause();
        }
        throw new AssertionError("the call succeeded");
    }

    /** Every file under {@code dir} with a hash of its bytes, to show nothing was written. */
    private static Map<String, Integer> contents(Path dir) {
        Map<String, Integer> m = new TreeMap<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                m.put(dir.relativize(f).toString(), java.util.Arrays.hashCode(Files.readAllBytes(f)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return m;
    }

    @Test
    void rangeStores_workerProcess_storesSyncsAndReadsBackByteIdentical_alsoAfterARestart() {
        ConfigurableApplicationContext w1 = RUNNING.get("rd-1");
        RemoteRangeStore store = rangeStore(w1);
        PbnRange range = assignment(w1).range();
        assertThat(store.range()).isEqualTo(range);
        long next = store.sync().join(); // another test may have stored on rd-1 first
        byte[] raw = blocks(1, 1, false);
        byte[] zstd = blocks(2, 1, true);
        byte[] frame = blocks(3, 4, true);
        long a = store.store(PayloadCodec.RAW, BS, 1, fps(raw), raw).join();
        long b = store.store(PayloadCodec.ZSTD, BS, 1, fps(zstd), Zstd.compress(zstd)).join();
        long c = store.store(PayloadCodec.ZSTD_FRAME, BS, 4, fps(frame), Zstd.compress(frame)).join();
        assertThat(new long[] {a, b, c}).as("PBNs in the range, in order").containsExactly(next, next + 1, next + 2);
        assertThat(range.contains(next)).isTrue();
        assertThat(store.sync().join()).as("durable below the next PBN").isEqualTo(next + 6);
        long[] pbns = {a, b, c, c + 1, c + 2, c + 3};
        List<byte[]> expected = new ArrayList<>(List.of(raw, zstd));
        for (int k = 0; k < 4; k++) {
            expected.add(java.util.Arrays.copyOfRange(frame, k * BS, (k + 1) * BS));
        }
        assertThat(store.read(pbns).join()).containsExactlyElementsOf(expected);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            ClusterController.RangeData listed = listed("rd-1").rangeData();
            assertThat(listed).as("the worker list shows the range data its heartbeat reports").isNotNull();
            assertThat(listed.state()).isEqualTo("serving");
            assertThat(listed.pbnsUsed()).isEqualTo(next + 6 - range.first());
            assertThat(listed.logBytes()).as("the data logs hold the blocks").isGreaterThanOrEqualTo(BS);
        });
        Path dir = data.resolve("rd-1").resolve(WorkerRangeData.DIRECTORY);
        assertThat(dir.resolve("data")).as("the data logs").isDirectory();
        assertThat(dir.resolve("catalog")).as("the range store's own metadata").isDirectory();
        assertThat(data.resolve("rd-1").resolve("data")).as("no node-wide data store on a worker").doesNotExist();

        long id = assignment(w1).workerId();
        stop(w1);
        await().atMost(Duration.ofSeconds(20)).until(() -> master.getBean(ClusterServer.class).rangeStores().up(id) == null);
        ConfigurableApplicationContext again = worker("rd-1");
        assertThat(assignment(again).workerId()).as("the same worker").isEqualTo(id);
        RemoteRangeStore reopened = rangeStore(again);
        assertThat(reopened.read(pbns).join()).as("read back after the worker restarted").containsExactlyElementsOf(expected);
        byte[] more = blocks(4, 1, false);
        assertThat(reopened.store(PayloadCodec.RAW, BS, 1, fps(more), more).join()).as("appends go on after the synced ones")
                .isEqualTo(next + 6);
    }

    /** The master's end of {@code w}'s GC deltas, null while its link is down. */
    private static RemoteGcDeltas gcDeltas(ConfigurableApplicationContext w) {
        WorkerRecord a = assignment(w);
        return a == null ? null : master.getBean(ClusterServer.class).gcDeltas().up(a.workerId());
    }

    /** Every USED GMA slot of worker {@code w} as "rc/pins/flags/expiry", by PBN. */
    private static TreeMap<Long, String> gma(ConfigurableApplicationContext w) {
        BoscPipeline p = w.getBean(WorkerGcMetadata.class).pipeline();
        p.commitAll();
        TreeMap<Long, String> out = new TreeMap<>();
        p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> out.put(pbn, rc + "/" + pins + "/" + flags + "/" + expiry));
        return out;
    }

    @Test
    void gcDeltas_workerProcess_loggedInRangeDataGc_replayAfterARestartAcknowledgedAndChangesNothing() {
        ConfigurableApplicationContext w = worker("rd-gc"); // its own node: the other tests' restarts do not cut its link
        PbnRange range = assignment(w).range();
        UpdateBatch share = new UpdateBatch();
        share.add(GcDelta.RC_ADD, range.first(), 2);
        share.add(GcDelta.RC_ADD, range.first() + 5, 1);
        share.add(GcDelta.RC_ADD, range.first(), 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> gcDeltas(w) != null);
        gcDeltas(w).send(7, share).orTimeout(20, TimeUnit.SECONDS).join();
        assertThat(gcDeltas(w).appliedDeltaId()).as("acknowledged").isEqualTo(GcDelta.deltaId(7, 0));
        Path dir = data.resolve("rd-gc").resolve(WorkerRangeData.DIRECTORY).resolve("gc");
        assertThat(w.getBean(WorkerGcMetadata.class).dir()).isEqualTo(dir);
        TreeMap<Long, String> counts = gma(w);
        assertThat(counts.keySet()).as("the two PBNs counted").containsExactly(range.first(), range.first() + 5);
        assertThat(counts.get(range.first())).startsWith("3/");
        assertThat(counts.get(range.first() + 5)).startsWith("1/");
        assertThat(dir.resolve("gma.dat")).as("the GMA").isRegularFile();
        assertThat(dir.resolve("gma.range")).as("the range it was made for").isRegularFile();
        try (Stream<Path> logs = Files.list(dir.resolve("log"))) {
            assertThat(logs.map(f -> f.getFileName().toString())).as("the BOSC log").anyMatch(f -> f.endsWith(".log"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }

        long id = assignment(w).workerId();
        stop(w); // closes the connector, then the GC metadata (Spring's destroy order)
        await().atMost(Duration.ofSeconds(20)).until(() -> master.getBean(ClusterServer.class).gcDeltas().up(id) == null);
        ConfigurableApplicationContext again = worker("rd-gc");
        await().atMost(Duration.ofSeconds(10)).until(() -> gcDeltas(again) != null);
        RemoteGcDeltas link = gcDeltas(again);
        link.send(7, share).orTimeout(20, TimeUnit.SECONDS).join(); // the master resends what it holds no acknowledgement for
        assertThat(link.appliedDeltaId()).as("the replay is answered with the same mark").isEqualTo(GcDelta.deltaId(7, 0));
        assertThat(again.getBean(WorkerGcMetadata.class).pipeline().updatesLogged()).as("nothing logged again").isZero();
        assertThat(gma(again)).as("the counts as before the replay").isEqualTo(counts);
    }

    @Test
    void rangeStores_twoWorkerProcesses_eachStoresInItsOwnRange() {
        ConfigurableApplicationContext first = RUNNING.get("rd-1");
        ConfigurableApplicationContext second = worker("rd-2");
        PbnRange r2 = assignment(first).range();
        PbnRange r3 = assignment(second).range();
        assertThat(r2.first() >= r3.limit() || r3.first() >= r2.limit()).as("%s and %s are disjoint", r2, r3).isTrue();
        byte[] x = blocks(5, 1, false);
        byte[] y = blocks(6, 1, false);
        long p2 = rangeStore(first).store(PayloadCodec.RAW, BS, 1, fps(x), x).join();
        long p3 = rangeStore(second).store(PayloadCodec.RAW, BS, 1, fps(y), y).join();
        assertThat(r2.contains(p2)).as("PBN %d in %s", p2, r2).isTrue();
        assertThat(r3.contains(p3)).as("PBN %d in %s", p3, r3).isTrue();
        assertThat(rangeStore(first).read(new long[] {p2}).join().get(0)).isEqualTo(x);
        assertThat(rangeStore(second).read(new long[] {p3}).join().get(0)).isEqualTo(y);
        assertThat(failure(rangeStore(first).read(new long[] {p3}))).as("the other worker's PBN").isInstanceOf(
                RangeWorkerFailedException.class).hasMessageContaining("outside this worker's range");
        assertThat(data.resolve("rd-2").resolve(WorkerRangeData.DIRECTORY).resolve("data")).isDirectory();
    }

    @Test
    void workerProcess_rangeDataOfAnotherRange_refusedOnceInTheLog_nothingWritten_staysRegistered(CapturedOutput output) {
        // range-data made for another range (as if copied from another node) before the worker first starts
        Path dir = data.resolve("rd-3").resolve(WorkerRangeData.DIRECTORY);
        PbnRange foreign = new PbnRange(1L << 60, (1L << 60) + (1L << 20));
        byte[] old = blocks(7, 1, false);
        try (WorkerRangeData other = new WorkerRangeData(dir, new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 64,
                0))) {
            DataStore s = other.claim(foreign);
            s.append(fps(old), 0, old, 0, BS, FormatVersions.CODEC_RAW, BS);
            s.sync();
        }
        Map<String, Integer> logsBefore = contents(dir.resolve("data"));
        assertThat(logsBefore).isNotEmpty();

        ConfigurableApplicationContext w4 = worker("rd-3");
        assertThat(assignment(w4).range()).isNotEqualTo(foreign);
        byte[] x = blocks(8, 1, false);
        Throwable refused = failure(rangeStore(w4).store(PayloadCodec.RAW, BS, 1, fps(x), x));
        assertThat(refused).isInstanceOf(RangeWorkerFailedException.class).hasMessageContaining("another node's data directory");
        assertThat(failure(rangeStore(w4).sync())).isInstanceOf(RangeWorkerFailedException.class);
        assertThat(w4.getBean(WorkerConnector.class).status().connected()).as("the link stays").isTrue();
        assertThat(master.getBean(DedupLinks.class).upByWorkerId().get(assignment(w4).workerId()).load())
                .as("a dedup call (load only) is still answered: the worker keeps deduplicating").isNotNull();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            ClusterController.RangeData listed = listed("rd-3").rangeData();
            assertThat(listed).as("the worker list says the range data is refused").isNotNull();
            assertThat(listed.state()).isEqualTo("refused");
            assertThat(listed.pbnsUsed()).isZero();
        });
        assertThat(master.getBean(WorkerRegistry.class).workers().stream().filter(v -> v.nodeName().equals("rd-3")).findFirst().orElseThrow()
                .state()).isEqualTo(MemberState.UP);
        String log = output.getAll();
        assertThat(log).contains("cannot open the range store in " + dir).contains("another node's data directory")
                .contains("keeps serving the master's dedup calls");
        assertThat(log.split("cannot open the range store", -1).length - 1).as("logged once, not per request").isEqualTo(1);
        stop(w4);
        assertThat(contents(dir.resolve("data"))).as("nothing written to the other range's logs").isEqualTo(logsBefore);
        try (WorkerRangeData other = new WorkerRangeData(dir, new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 64,
                0))) {
            assertThat(other.claim(foreign).nextPbn()).as("its own range and block are intact").isEqualTo(foreign.first() + 1);
        }
    }
}
