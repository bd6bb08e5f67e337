package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.common.tls.CertificateFingerprint;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerCapacity;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.ingest.IngestTls;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A worker's link against a real master port over TLS: pinning, registration, heartbeats, reconnects. */
class WorkerConnectorTest {
    @TempDir
    Path dir;
    private MetadataDb db;
    private ApiTokens tokens;
    private WorkerRegistry registry;
    private ServerCertificate cert;
    private ClusterServer server;
    private int port;
    private Path tokenFile;

    @BeforeEach
    void start() throws Exception {
        db = MetadataDb.open(dir.resolve("catalog"));
        tokens = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE);
        cert = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
        registry = new WorkerRegistry(new ClusterStore(db), new MembershipSettings(Duration.ofMillis(100), Duration.ofMillis(400),
                Duration.ofSeconds(2), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), Clock.systemUTC());
        server = master(0);
        port = server.port();
        tokenFile = dir.resolve("worker.token");
        Files.writeString(tokenFile, tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "t", "t").token() + "\n");
    }

    private ClusterServer master(int port) {
        ClusterServer s = new ClusterServer(new ClusterServer.Settings("127.0.0.1", port, IngestTls.of(cert.privateKey(), cert.chain(),
                "auto"), "test"), registry, tokens, AuditLog.NONE);
        s.start();
        return s;
    }

    @AfterEach
    void stop() {
        server.close();
        db.close();
    }

    private WorkerConnector worker(String node, MasterTrust trust) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", port, null, node, tokenFile, trust, "auto", "test",
                Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)), new LoadProbe(dir));
        w.start();
        return w;
    }

    @Test
    void start_pinnedFingerprint_registersAndStaysUpOnHeartbeats() throws Exception {
        try (WorkerConnector w = worker("w1", MasterTrust.pinned(cert.fingerprint()))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            assertThat(w.status().assignment().workerId()).isEqualTo(1);
            assertThat(w.status().assignment().range().first()).isEqualTo(MembershipSettings.DEFAULT_FIRST_PBN);
            long registeredAt = registry.workers().get(0).lastHeartbeatMillis();
            Thread.sleep(800); // twice late-after: only heartbeats keep it up
            // heard again twice late-after past the registration, and up: on a loaded machine the one instant
            // after the sleep may fall in a gap of more than late-after (400 ms) between two heartbeats (LATE
            // until the next one); without heartbeats it is LATE, then LOST, and never up again
            WorkerView v = await().atMost(Duration.ofSeconds(10)).until(() -> registry.workers().get(0),
                    x -> x.state() == MemberState.UP && x.lastHeartbeatMillis() - registeredAt >= 800);
            assertThat(v.state()).isEqualTo(MemberState.UP);
            assertThat(v.load().heapMaxBytes()).isPositive();
            assertThat(v.load().diskFreeBytes()).isPositive();
            assertThat(v.capacity().cpus()).isPositive();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> registry.state(1) == MemberState.LOST);
    }

    /** Worker w1 trusting the master's certificate, telling {@code lease} of the master's acknowledgements; not started. */
    private WorkerConnector leased(MasterLease lease) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", port, null, "w1", tokenFile,
                MasterTrust.pinned(cert.fingerprint()), "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)),
                new LoadProbe(dir));
        w.reportHearing(lease);
        return w;
    }

    @Test
    void heartbeatAcks_holdTheDeleteLease_whichLapsesOnceTheMasterIsGone() throws Exception {
        MasterLease lease = new MasterLease(Duration.ofMillis(600));
        try (WorkerConnector w = leased(lease)) {
            assertThat(lease.safeNanos()).as("nothing heard yet").isNotPositive();
            w.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            // held within half the lease's 600 ms of an acknowledgement: awaited, as the one instant after the connect
            // may fall in a longer gap between two acknowledged heartbeats on a loaded machine (0 left, seen at load 37)
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.safeNanos() > 0);
            Thread.sleep(700); // past lost-after: only acknowledged heartbeats (every 100 ms) renew it
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.safeNanos() > 0);
            server.close();
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.safeNanos() <= 0);
        }
    }

    @Test
    void workerLostAfterLongerThanTheMasters_leaseRunsOnTheMasters_andLapsesWithinHalfOfIt() throws Exception {
        MasterLease lease = new MasterLease(Duration.ofSeconds(60)); // the master here: 2 s
        try (WorkerConnector w = leased(lease)) {
            w.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            assertThat(lease.lostAfter()).isEqualTo(Duration.ofSeconds(2));
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.safeNanos() > 0); // held (awaited: see above)
            assertThat(lease.safeNanos()).as("never more than the master's lost-after").isLessThanOrEqualTo(Duration.ofSeconds(2).toNanos());
            server.close(); // no acks from here on
            long closed = System.nanoTime();
            // on its own 60 s it would hold 30 s past the last ack
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.safeNanos() <= 0);
            Duration lapsed = Duration.ofNanos(System.nanoTime() - closed);
            System.out.println("lease with worker lost-after 60 s, master 2 s: lapsed " + lapsed.toMillis() + " ms after the master closed");
            assertThat(lapsed).isLessThan(Duration.ofSeconds(5));
        }
    }

    @Test
    void start_wrongFingerprint_refusesTheMasterAndRegistersNothing() throws Exception {
        CertificateFingerprint other = CertificateFingerprint.parse("00".repeat(32));
        try (WorkerConnector w = worker("w1", MasterTrust.pinned(other))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().lastError() != null);
            assertThat(w.status().lastError()).contains("fingerprint " + cert.fingerprint()).contains("is " + other);
            assertThat(w.status().connected()).isFalse();
            assertThat(registry.workers()).isEmpty();
        }
    }

    @Test
    void start_caCertificateFile_checksChainAndHostNameAndRegisters() throws Exception {
        try (WorkerConnector w = worker("w1", MasterTrust.caCertificates(dir.resolve("tls").resolve("server.crt")))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            assertThat(registry.workers()).singleElement().satisfies(v -> assertThat(v.nodeName()).isEqualTo("w1"));
        }
    }

    @Test
    void start_caFileOfAnotherServer_refusesTheMasterAndRegistersNothing() throws Exception {
        ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("other-tls")));
        try (WorkerConnector w = worker("w1", MasterTrust.caCertificates(dir.resolve("other-tls").resolve("server.crt")))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().lastError() != null);
            assertThat(w.status().lastError()).contains("is not trusted by holdfast.cluster.master-ca-certificate");
            assertThat(registry.workers()).isEmpty();
        }
    }

    @Test
    void caCertificates_fileWithoutCertificate_isRefusedNamingTheSetting() throws Exception {
        Path empty = Files.writeString(dir.resolve("empty.pem"), "no certificate here\n");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MasterTrust.caCertificates(empty))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdfast.cluster.master-ca-certificate");
    }

    @Test
    void start_agentToken_logsTheRefusalAndRegistersNothing() throws Exception {
        Files.writeString(tokenFile, tokens.issue(new ApiTokens.TokenRequest("a", Role.AGENT, null, null, null), "t", "t").token());
        try (WorkerConnector w = worker("w1", MasterTrust.pinned(cert.fingerprint()))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().lastError() != null);
            assertThat(w.status().lastError()).contains("refused this worker (UNAUTHORIZED): token refused:").contains("role agent")
                    .contains(tokenFile.toString()).contains("if another host replaced this worker, stop this one");
            assertThat(registry.workers()).isEmpty();
        }
    }

    @Test
    void takeoverHeldBack_theWorkerKeepsRetrying_andRegistersOnceTheOldNodeWasSilentForLostAfter() throws Exception {
        // the old node of w1 archived its range at epoch 1 and its link dropped just now; this worker has no range data
        String tokenId = tokens.authenticate(Files.readString(tokenFile).strip()).tokenId();
        // the old node was last heard at its REGISTER: lost-after counts from there, not from the disconnect (taken
        // after it, this mark put the master's correct wait short of lost-after once the two steps between took 200 ms)
        long heard = System.nanoTime();
        WorkerRecord old = registry.register("w1", tokenId, "127.0.0.2:1", new WorkerCapacity(1, 1, 1), "v", 1);
        registry.archivedAt(old.workerId(), old.epoch(), 1, true);
        registry.disconnected(old.workerId(), old.epoch());
        try (WorkerConnector w = worker("w1", MasterTrust.pinned(cert.fingerprint()))) {
            await().atMost(Duration.ofSeconds(5)).until(() -> w.status().lastError() != null);
            assertThat(w.status().connected()).isFalse();
            assertThat(w.status().lastError()).contains("NODE_CONFLICT").contains("a takeover may start once it has been silent");
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            assertThat(System.nanoTime() - heard).as("not before lost-after since the old node was heard").isGreaterThanOrEqualTo(
                    registry.settings().lostAfter().toNanos());
            assertThat(w.status().assignment().epoch()).isEqualTo(old.epoch() + 1);
        }
    }

    /**
     * A node cut off while an admin gave its worker id to another host comes back as a new worker:
     * the master's acknowledgements now hold no delete lease over its former id's range, which the
     * other host may be taking over (the master waits for the former id's node only), only over the new one's.
     */
    @Test
    void nodeBackAsANewWorkerAfterAReplacement_holdsNoDeleteLeaseOverItsFormerRange() throws Exception {
        MasterLease lease = new MasterLease(Duration.ofSeconds(2));
        try (WorkerConnector w = leased(lease)) {
            w.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.safeNanos(1) > 0); // held (awaited: see above)
            server.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> !w.status().connected() && w.status().lastError() != null);
            registry = new WorkerRegistry(new ClusterStore(db), registry.settings(), Clock.systemUTC()); // a restarted master
            registry.replace(1, "w9"); // worker 1 goes to another host
            server = master(port);
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            assertThat(w.status().assignment().workerId()).isEqualTo(2);
            await().atMost(Duration.ofSeconds(5)).until(() -> lease.safeNanos(2) > 0); // held (awaited: see above)
            assertThat(lease.safeNanos(1)).as("no delete in worker 1's key space").isNotPositive();
        }
    }

    @Test
    void masterRestart_workerReconnectsWithTheSameRangeAndEpochPlusOne() throws Exception {
        try (WorkerConnector w = worker("w1", MasterTrust.pinned(cert.fingerprint()))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            long first = w.status().assignment().range().first();
            server.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> !w.status().connected() && w.status().lastError() != null);
            registry = new WorkerRegistry(new ClusterStore(db), registry.settings(), Clock.systemUTC()); // a restarted master
            server = master(port);
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            assertThat(w.status().assignment().epoch()).isEqualTo(2);
            assertThat(w.status().assignment().range().first()).isEqualTo(first);
            // up once a heartbeat came within late-after (400 ms): on a loaded machine the one instant after the
            // connect may fall in a longer gap between two heartbeats (LATE until the next one)
            await().atMost(Duration.ofSeconds(10)).until(() -> registry.state(1) == MemberState.UP);
        }
    }
}
