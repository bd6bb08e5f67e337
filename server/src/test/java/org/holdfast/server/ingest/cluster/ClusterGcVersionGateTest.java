package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.RefusedWriter.frame;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.common.protocol.TakeoverRecords;
import org.holdfast.common.protocol.TakeoverRecordsPart;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster version 4 gates the GC frames (real sockets, real tokens and catalog): a master keeping its
 * blocks on the workers refuses a worker that offers an older version at REGISTER (UNSUPPORTED_VERSION
 * saying to upgrade the worker, audited, nothing registered) and registers one of this release; a
 * master keeping its blocks itself still registers version 3 and older workers, but gives their links
 * no GC frames (a worker before version 4 would close its link on them). Version 7 gates TAKEOVER_RECORDS:
 * answered from the catalog's records on a link registered at 7, refused on one registered at 6.
 */
class ClusterGcVersionGateTest {
    @TempDir
    Path dir;
    private MetadataDb db;
    private ClusterServer server;
    private WorkerRegistry registry;
    private ClusterStore store;
    private String workerToken;
    private final List<AuditEvent> audit = new CopyOnWriteArrayList<>();

    /** A master's cluster port (plain TCP, any free port) accepting workers of {@code minClusterVersion} and newer. */
    private void startMaster(int minClusterVersion) {
        db = MetadataDb.open(dir.resolve("catalog"));
        ApiTokens tokens = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE);
        store = new ClusterStore(db);
        registry = new WorkerRegistry(store, new MembershipSettings(Duration.ofMillis(200), Duration.ofSeconds(2), Duration.ofSeconds(10),
                MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE, 64), Clock.systemUTC());
        server = new ClusterServer(new ClusterServer.Settings("127.0.0.1", 0, null, "test", minClusterVersion), registry, tokens,
                audit::add);
        server.start();
        workerToken = tokens.issue(new ApiTokens.TokenRequest("workers", Role.WORKER, null, null, null), "test", "test").token();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (db != null) {
            db.close();
        }
    }

    /** A socket that sent REGISTER at {@code version}, as a worker of the release of that version does first. */
    private Socket register(int version, String node) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(frame(new Register(version, node, workerToken, "old", 2, 1L << 30, 1L << 40)));
        out.flush();
        return s;
    }

    /** The next frame the master sends, or null once it closed the connection. */
    private static Message next(Socket s) throws IOException {
        List<Message> one = ClusterFrames.read(s.getInputStream(), 1);
        return one.isEmpty() ? null : one.get(0);
    }

    @Test
    void takeoverRecords_answeredFromTheRecordsOnAVersionSevenLink_badStateOnAVersionSixLink() throws Exception {
        startMaster(Register.MIN_CLUSTER_VERSION);
        SealedLogStore records = new SealedLogStore(db);
        server.answerTakeoverRecords(records::part);
        SealedLogReport.Sealed log = new SealedLogReport.Sealed(2, 1, 5, 4096, new byte[32]);
        try (Socket s = register(Register.TAKEOVER_RECORDS_VERSION, "heir-1")) {
            Registered r = (Registered) next(s);
            records.apply(r.workerId(), new SealedLogReport(true, List.of(log), List.of(), 0));
            s.getOutputStream().write(frame(new TakeoverRecords(9, 0)));
            s.getOutputStream().flush();
            Message part = next(s);
            while (!(part instanceof TakeoverRecordsPart)) { // heartbeat acks, if any, come first
                part = next(s);
            }
            assertThat(part).isEqualTo(new TakeoverRecordsPart(9, TakeoverRecordsPart.RECORDS, true, false, List.of(log), ""));
        }
        try (Socket s = register(Register.TAKEOVER_RECORDS_VERSION - 1, "old-2")) {
            assertThat(next(s)).isInstanceOf(Registered.class);
            s.getOutputStream().write(frame(new TakeoverRecords(10, 0)));
            s.getOutputStream().flush();
            Message refused = next(s);
            assertThat(refused).isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("TAKEOVER_RECORDS on a link registered at cluster version 6");
            });
        }
    }

    @Test
    void register_dataOnWorkersMasterAndOlderWorker_refusedUnsupportedVersionAuditedNothingRegistered() throws Exception {
        startMaster(Register.GC_FRAMES_VERSION);
        for (int version = Register.GC_FRAMES_VERSION - 1; version >= Register.MIN_CLUSTER_VERSION; version--) {
            // an older worker steps down one version at a time: each offer is refused the same way
            try (Socket s = register(version, "old-1")) {
                Message answer = next(s);
                assertThat(answer).isInstanceOfSatisfying(ErrorMessage.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
                    assertThat(e.message()).contains("holdfast.cluster.data=workers", "needs cluster protocol version 4",
                            "upgrade the worker");
                });
                assertThat(next(s)).as("then the master closes").isNull();
            }
        }
        assertThat(registry.workers()).as("nothing registered").isEmpty();
        assertThat(store.workers()).as("nothing stored").isEmpty();
        assertThat(audit).as("each refusal audited as the other registration refusals")
                .filteredOn(a -> a.action().equals("cluster.register") && a.result().equals("denied"))
                .hasSize(Register.GC_FRAMES_VERSION - Register.MIN_CLUSTER_VERSION)
                .allSatisfy(a -> {
                    assertThat(a.target()).isEqualTo("node:old-1");
                    assertThat(a.principal()).as("after the token check").isNotEqualTo("anonymous");
                    assertThat(a.detail()).contains("upgrade the worker");
                });
    }

    @Test
    void register_dataOnWorkersMasterAndWorkerOfThisRelease_registersWithGcLinks() throws Exception {
        startMaster(Register.GC_FRAMES_VERSION);
        Path tokenFile = Files.writeString(dir.resolve("worker.token"), workerToken);
        try (WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", server.port(), null, "new-1", tokenFile,
                null, "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)), new LoadProbe(dir))) {
            w.start();
            await().atMost(Duration.ofSeconds(15)).until(() -> w.status().connected() && server.rangeSweeps().up(1) != null);
            assertThat(server.gcDeltas().up(1)).isNotNull();
            assertThat(server.gcGuards().up(1)).isNotNull();
        }
        assertThat(audit).filteredOn(a -> a.action().equals("cluster.register")).extracting(AuditEvent::result).containsExactly("ok");
    }

    @Test
    void register_blocksOnMasterAndVersionThreeWorker_registersWithoutGcLinks() throws Exception {
        startMaster(Register.MIN_CLUSTER_VERSION);
        try (Socket old = register(Register.GC_FRAMES_VERSION - 1, "old-1"); Socket current = register(Register.CLUSTER_VERSION, "new-1")) {
            assertThat(next(old)).isInstanceOf(Registered.class);
            assertThat(next(current)).isInstanceOf(Registered.class);
            long oldId = registry.workers().stream().filter(v -> v.nodeName().equals("old-1")).findFirst().orElseThrow().workerId();
            long newId = registry.workers().stream().filter(v -> v.nodeName().equals("new-1")).findFirst().orElseThrow().workerId();
            await().atMost(Duration.ofSeconds(10)).until(() -> server.rangeStores().up(oldId) != null
                    && server.rangeSweeps().up(newId) != null);
            assertThat(server.gcDeltas().up(oldId)).as("no GC frame for a worker before version 4").isNull();
            assertThat(server.gcGuards().up(oldId)).isNull();
            assertThat(server.rangeSweeps().up(oldId)).isNull();
            assertThat(server.gcDeltas().up(newId)).as("a worker of this release gets them").isNotNull();
            assertThat(server.gcGuards().up(newId)).isNotNull();
        }
        List<String> results = new ArrayList<>();
        audit.stream().filter(a -> a.action().equals("cluster.register")).forEach(a -> results.add(a.result()));
        assertThat(results).containsExactly("ok", "ok");
    }

    @Test
    void register_versionSixAndSevenWorkers_onlyTheSeventhGetsACountsCheckEnd() throws Exception {
        startMaster(Register.GC_FRAMES_VERSION);
        try (Socket six = register(Register.COUNTS_CHECK_VERSION - 1, "six-1"); Socket seven = register(Register.COUNTS_CHECK_VERSION,
                "seven-1")) {
            assertThat(next(six)).isInstanceOf(Registered.class);
            assertThat(next(seven)).isInstanceOf(Registered.class);
            long sixId = registry.workers().stream().filter(v -> v.nodeName().equals("six-1")).findFirst().orElseThrow().workerId();
            long sevenId = registry.workers().stream().filter(v -> v.nodeName().equals("seven-1")).findFirst().orElseThrow().workerId();
            await().atMost(Duration.ofSeconds(10)).until(() -> server.rangeSweeps().up(sixId) != null
                    && server.countsChecks().up(sevenId) != null);
            // a version 6 worker would close its link on COUNTS_CHECK: the check reports it "needs cluster version 7"
            assertThat(server.countsChecks().up(sixId)).as("no COUNTS_CHECK for a version 6 worker").isNull();
            assertThat(server.gcDeltas().up(sixId)).as("its GC frames as before").isNotNull();
        }
    }
}
