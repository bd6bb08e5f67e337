package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.IngestTls;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker removed while away missed the forgets of the PBNs GC freed meanwhile; when its node
 * comes back it must not answer them from its old on-disk index (real TLS sockets, real engine on
 * disk, one JVM).
 */
class RemovedWorkerStaleIndexTest {
    private static final int N = 50;
    private static final SungemSettings SETTINGS = SungemFingerprintIndexTest.smallSettings();

    @TempDir
    Path dir;

    private WorkerConnector worker(ClusterServer server, ServerCertificate cert, Path tokenFile, LazyDedupWorker engine) {
        WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", server.port(), null, "w1", tokenFile,
                MasterTrust.pinned(cert.fingerprint()), "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                Duration.ofMillis(200)), new LoadProbe(dir), engine);
        w.start();
        // the master adds the link right after sending REGISTERED; the worker may not have read it yet
        await().atMost(Duration.ofSeconds(20)).until(() -> server.dedupLinks().workers().size() == 1 && w.status().connected());
        return w;
    }

    private LazyDedupWorker engine(Path index) {
        return new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index, SETTINGS, Clock.systemUTC()));
    }

    private static long[] lookup(RemoteFingerprintIndex remote, byte[] f) {
        long[] pbns = new long[N];
        try (DedupStream s = remote.openStream("v")) {
            s.lookup(f, N, pbns);
        }
        return pbns;
    }

    private static void stop(WorkerConnector w, LazyDedupWorker engine, WorkerRegistry registry, long id) {
        w.close();
        engine.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> registry.state(id) == MemberState.LOST);
    }

    @Test
    void removedWorkerComingBack_isNewAndDoesNotAnswerFreedPbnsFromItsOldIndex() throws Exception {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            ApiTokens tokens = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE);
            ServerCertificate cert = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
            WorkerRegistry registry = new WorkerRegistry(new ClusterStore(db), new MembershipSettings(Duration.ofMillis(500),
                    Duration.ofSeconds(10), Duration.ofSeconds(20), MembershipSettings.DEFAULT_FIRST_PBN,
                    MembershipSettings.DEFAULT_RANGE_SIZE), Clock.systemUTC());
            Path tokenFile = dir.resolve("worker.token");
            Files.writeString(tokenFile, tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "t", "t").token());
            Path index = dir.resolve("dedup-worker");
            byte[] f = new byte[N * 32];
            new java.util.Random(31).nextBytes(f);
            try (ClusterServer server = new ClusterServer(new ClusterServer.Settings("127.0.0.1", 0,
                    IngestTls.of(cert.privateKey(), cert.chain(), "auto"), "test"), registry, tokens, AuditLog.NONE)) {
                server.start();
                RemoteFingerprintIndex remote = new RemoteFingerprintIndex(server.dedupLinks(), registry, ClusterMode.NEAREST, SETTINGS);

                LazyDedupWorker e1 = engine(index);
                WorkerConnector w1 = worker(server, cert, tokenFile, e1);
                long[] pbns = new long[N];
                boolean[] isNew = new boolean[N];
                try (DedupStream s = remote.openStream("v")) {
                    s.lookup(f, N, pbns);
                    for (int i = 0; i < N; i++) {
                        pbns[i] = 7000 + i;
                        isNew[i] = true;
                    }
                    s.record(f, N, pbns, isNew);
                }
                remote.flush();
                long firstId = registry.workers().get(0).workerId();
                assertThat(server.dedupLinks().indexReport(firstId).entries()).as("its index as the flush's answer said").isEqualTo(N);
                stop(w1, e1, registry, firstId);
                assertThat(server.dedupLinks().indexReport(firstId).entries()).as("a lost worker's last report stays").isEqualTo(N);

                // control: the same membership back (epoch 2) keeps its index, so the check below could fail
                LazyDedupWorker e2 = engine(index);
                WorkerConnector w2 = worker(server, cert, tokenFile, e2);
                assertThat(server.dedupLinks().indexReport(firstId)).as("unknown after a registration until it answers").isNull();
                assertThat(lookup(remote, f)).as("a returning worker answers from its kept index").containsExactly(pbns);
                remote.flush();
                stop(w2, e2, registry, firstId);

                assertThatThrownBy(() -> remote.forgetAll(pbns, f, N)).isInstanceOf(IllegalStateException.class);
                WorkerRecord removed = registry.remove(firstId);
                remote.forgetAll(pbns, f, N); // GC frees them now: the removed worker never hears of it

                LazyDedupWorker e3 = engine(index);
                try (WorkerConnector w3 = worker(server, cert, tokenFile, e3)) {
                    WorkerRecord again = w3.status().assignment();
                    assertThat(again.workerId()).isNotEqualTo(removed.workerId());
                    assertThat(again.epoch()).isEqualTo(1L);
                    assertThat(again.range().overlaps(removed.range())).isFalse();
                    assertThat(lookup(remote, f)).as("freed PBNs must not come back as duplicates").containsOnly(0L);
                    assertThat(server.dedupLinks().indexReport(again.workerId()).entries()).as("its index started over").isZero();
                } finally {
                    e3.close();
                }
            }
        }
    }
}
