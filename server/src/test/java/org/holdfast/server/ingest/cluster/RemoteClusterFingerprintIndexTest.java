package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.engine.ClusterBroadcast;
import org.holdfast.server.engine.ClusterFingerprintIndex;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.FingerprintIndexContractTest;
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

/**
 * The master/worker index's contract with its two workers in other "nodes": each worker hosts its
 * own engine behind a {@link WorkerConnector} registered over TLS with a real {@link ClusterServer},
 * and the master calls them through {@link RemoteDedupWorker}s on those links (one JVM, real sockets).
 * With a full broadcast; {@link RemoteTwoPhaseClusterFingerprintIndexTest} runs the same with the
 * two-phase one.
 */
class RemoteClusterFingerprintIndexTest extends FingerprintIndexContractTest {
    private static final int WORKERS = 2;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private ClusterServer server;
    private WorkerRegistry registry;
    private final List<LocalDedupWorker> engines = new ArrayList<>();

    @Override
    protected FingerprintIndex openIndex(Path dir) {
        try {
            MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
            opened.add(db::close);
            ApiTokens tokens = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE);
            ServerCertificate cert = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
            registry = new WorkerRegistry(new ClusterStore(db), new MembershipSettings(Duration.ofMillis(500),
                    Duration.ofSeconds(10), Duration.ofSeconds(20), MembershipSettings.DEFAULT_FIRST_PBN,
                    MembershipSettings.DEFAULT_RANGE_SIZE), Clock.systemUTC());
            server = new ClusterServer(new ClusterServer.Settings("127.0.0.1", 0, IngestTls.of(cert.privateKey(), cert.chain(), "auto"),
                    "test"), registry, tokens, AuditLog.NONE);
            server.start();
            opened.add(0, server::close);
            Path tokenFile = dir.resolve("worker.token");
            if (!Files.exists(tokenFile)) { // a restart keeps the workers' token: their nodes are bound to it
                Files.writeString(tokenFile, tokens.issue(new ApiTokens.TokenRequest("w", Role.WORKER, null, null, null), "t", "t")
                        .token());
            }
            SungemSettings settings = SungemFingerprintIndexTest.smallSettings();
            for (int i = 0; i < WORKERS; i++) {
                LocalDedupWorker engine = new LocalDedupWorker(0, dir.resolve("worker-" + i), settings, Clock.systemUTC());
                engines.add(engine);
                opened.add(engine::close);
                WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", server.port(), null, "w" + i, tokenFile,
                        MasterTrust.pinned(cert.fingerprint()), "auto", "test", Duration.ofSeconds(5), Duration.ofMillis(50),
                        Duration.ofMillis(200)), new LoadProbe(dir), new LazyDedupWorker(0, () -> engine));
                w.start();
                opened.add(0, w::close);
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> server.dedupLinks().workers().size() == WORKERS);
            return new ClusterFingerprintIndex(server.dedupLinks().workers(), ClusterMode.NEAREST, broadcast(), settings.uSegment(),
                    settings.uContainer() / 2);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** How the index under test broadcasts lookups. */
    protected ClusterBroadcast broadcast() {
        return ClusterBroadcast.FULL;
    }

    /** The workers' engines (in worker order of connecting, not of the master's list). */
    protected List<LocalDedupWorker> engines() {
        return engines;
    }

    @Override
    protected void closeIndex(FingerprintIndex index) {
        index.close();
        for (AutoCloseable c : opened) { // workers' links first, then the master, then the engines and the catalog
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        opened.clear();
        engines.clear();
    }

    /** Looks up {@code n} new fingerprints on a stream of volume {@code v} and records them as stored at PBNs 1000 on. */
    void storeNew(byte[] f, int n) {
        long[] pbns = new long[n];
        boolean[] isNew = new boolean[n];
        try (DedupStream s = index().openStream("v")) {
            s.lookup(f, n, pbns);
            for (int i = 0; i < n; i++) {
                pbns[i] = 1000 + i;
                isNew[i] = true;
            }
            s.record(f, n, pbns, isNew);
        }
    }

    @Test
    void lookup_afterRecord_findsDuplicatesThroughTheRemoteWorkers() {
        int n = 1000;
        byte[] f = fps(7, n);
        storeNew(f, n);
        long[] again = new long[n];
        try (DedupStream s = index().openStream("v")) {
            s.lookup(f, n, again);
        }
        for (int i = 0; i < n; i++) {
            assertThat(again[i]).as("entry %d", i).isEqualTo(1000 + i);
        }
        long lookups = engines.stream().mapToLong(e -> e.engine().stats().lookups()).sum();
        assertThat(lookups).as("the workers' engines did the lookups").isGreaterThanOrEqualTo(2L * n);
    }

    @Test
    void lookup_workerLinkLost_failsWithClearErrorAndInventsNothing() throws Exception {
        byte[] f = fps(9, 100);
        long[] pbns = new long[100];
        FingerprintIndex idx = index();
        ((AutoCloseable) opened.get(0)).close(); // one worker's connector: its link ends
        await().atMost(Duration.ofSeconds(10)).until(() -> server.dedupLinks().workers().size() == WORKERS - 1);
        try (DedupStream s = idx.openStream("v")) {
            assertThatThrownBy(() -> s.lookup(f, 100, pbns)).isInstanceOf(CompletionException.class)
                    .hasRootCauseInstanceOf(DedupWorkerLostException.class)
                    .rootCause().hasMessageContaining("is lost").hasMessageContaining("run it again: the workers still connected serve it");
        }
        assertThat(pbns).containsOnly(0L);
    }

    @Test
    void lookup_workerEngineFails_failsNamingTheWorkerWithoutItsInternalsAndInventsNothing() throws Exception {
        byte[] f = fps(11, 100);
        long[] pbns = new long[100];
        FingerprintIndex idx = index();
        engines().get(0).close(); // the worker's engine fails every call from now on: DEDUP_FAILED, the link stays
        try (DedupStream s = idx.openStream("v")) {
            assertThatThrownBy(() -> s.lookup(f, 100, pbns)).isInstanceOf(CompletionException.class)
                    .hasRootCauseInstanceOf(DedupWorkerFailedException.class)
                    .rootCause().hasMessageContaining("failed a request").hasMessageContaining("run it again")
                    .hasMessageNotContaining("closed").hasMessageNotContaining("Exception");
        }
        assertThat(pbns).containsOnly(0L);
        assertThat(server.dedupLinks().workers()).as("a failed call does not end the link").hasSize(WORKERS);
    }

    @Test
    void remoteIndex_workerAway_backupsUseTheOthersAndForgetIsRefused() throws Exception {
        index();
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(server.dedupLinks(), registry, ClusterMode.NEAREST,
                SungemFingerprintIndexTest.smallSettings());
        byte[] f = fps(11, 10);
        ((AutoCloseable) opened.get(0)).close(); // worker w1's connector
        await().atMost(Duration.ofSeconds(10)).until(() -> server.dedupLinks().workers().size() == WORKERS - 1);
        try (DedupStream s = remote.openStream("v")) {
            long[] pbns = new long[10];
            s.lookup(f, 10, pbns);
            assertThat(pbns).containsOnly(0L);
        }
        assertThatThrownBy(() -> remote.forgetAll(new long[] {5}, f, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot free blocks while dedup worker w1").hasMessageContaining("bring the worker back");
    }

    /**
     * A sweep hands over up to 64 GMA chunks of freed PBNs at once (half a million): more than one
     * DEDUP_FORGET may carry, so the master sends them in frames of at most the limit, and every
     * worker forgets those of the last frame too.
     */
    @Test
    void remoteIndex_forgetAllOfMorePbnsThanOneFrameHolds_everyWorkerForgetsAllOfThem() {
        int n = 10;
        byte[] f = fps(13, n);
        storeNew(f, n); // PBNs 1000.. on the workers
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(server.dedupLinks(), registry, ClusterMode.NEAREST,
                SungemFingerprintIndexTest.smallSettings());
        int total = ProtocolLimits.MAX_DEDUP_ENTRIES + 1000;
        long[] pbns = new long[total];
        byte[] all = fps(14, total);
        for (int i = 0; i < total; i++) {
            pbns[i] = 1_000_000 + i;
        }
        for (int i = 0; i < n; i++) { // the stored ones at the end, in the second frame
            pbns[total - n + i] = 1000 + i;
            System.arraycopy(f, i * 32, all, (total - n + i) * 32, 32);
        }

        remote.forgetAll(pbns, all, total);

        long[] again = new long[n];
        try (DedupStream s = remote.openStream("v")) {
            s.lookup(f, n, again);
        }
        assertThat(again).as("forgotten by every worker: never answered again").containsOnly(0L);
    }

    @Test
    void remoteIndex_noWorkerConnected_openStreamSaysWhatToDo() {
        index();
        RemoteFingerprintIndex remote = new RemoteFingerprintIndex(new DedupLinks(), registry, ClusterMode.NEAREST,
                SungemFingerprintIndexTest.smallSettings());
        // DedupUnavailableException: the agent is told this message as it is (not "internal server error")
        assertThatThrownBy(() -> remote.openStream("v")).isInstanceOf(org.holdfast.server.engine.DedupUnavailableException.class)
                .hasMessageContaining("no dedup worker is connected to this master").hasMessageContaining("holdfast.cluster.role=worker");
    }
}
