package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.ingest.cluster.MasterTrust;
import org.holdfast.server.ingest.cluster.RemoteDedupWorker;
import org.holdfast.server.ingest.cluster.TlsWorkerNodes;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rebuild over real links: three worker nodes behind TLS connections to a cluster port (one
 * JVM), a generated stream backed up through them; the node at the master's position 2 comes back
 * with an empty index (same node name, so the same worker id, a new epoch: a replacement); the
 * rebuild over the links brings a repeat of the stream back to what it found before, teaching about
 * what the old engine held. Prints the rebuild's rate (docs/benchmarks.md).
 */
class RemoteWorkerIndexRebuildTest {
    @TempDir
    Path dir;

    @Test
    void rebuild_replacedNodeOverTlsLinks_repeatFindsWhatItFoundBefore() throws Exception {
        SteppingClock clock = new SteppingClock(Instant.parse("2026-01-01T00:00:00Z"));
        SungemSettings s = EngineComparisonTest.settingsFor(300_000L * EngineComparisonTest.EXACT_ENTRY_BYTES, 32, false,
                SungemSettings.defaults().stableLevels());
        BackupStreamGenerator gen = new BackupStreamGenerator(new BackupStreamGenerator.Params(4, 20_000, 0.7, 4, 0.015, 2048, 7));
        Path cluster = dir.resolve("cluster");
        try (TlsWorkerNodes nodes = new TlsWorkerNodes(cluster, 3, s, clock);
             LocalDedupWorker fresh = new LocalDedupWorker(0, dir.resolve("replacement"), s, clock)) {
            EngineReplay truth = EngineReplay.run(index(nodes.workers(), s), gen, () -> clock.advance(Duration.ofDays(1)));
            long stored = truth.result().stored();
            long[] before = WorkerIndexRebuildTest.repeat(index(nodes.workers(), s), gen, truth);
            // the node at position 2 (the third by worker id) loses its disk and comes back empty
            List<WorkerView> byId = nodes.registry().workers();
            int node = Integer.parseInt(byId.get(2).nodeName().substring(1));
            long oldHeld = nodes.engines().get(node).load().storedEntries();
            nodes.connector(node).close();
            await().atMost(Duration.ofSeconds(10)).until(() -> nodes.server().dedupLinks().workers().size() == 2);
            try (WorkerConnector replacement = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", nodes.server().port(), null,
                    "w" + node, cluster.resolve("worker.token"),
                    MasterTrust.pinned(ServerCertificateLoader.load(TlsSettings.selfSigned(cluster.resolve("tls"))).fingerprint()), "auto",
                    "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)), new LoadProbe(dir),
                    new LazyDedupWorker(0, () -> fresh))) {
                replacement.start();
                await().atMost(Duration.ofSeconds(20)).until(() -> nodes.server().dedupLinks().workers().size() == 3);
                assertThat(nodes.registry().workers().get(2).epoch()).as("the same worker, registered again").isEqualTo(2);
                long[] wiped = WorkerIndexRebuildTest.repeat(index(nodes.workers(), s), gen, truth);

                long t0 = System.nanoTime();
                WorkerIndexRebuild.Counts c;
                try (WorkerIndexRebuild r = new WorkerIndexRebuild(nodes.workers(), 2, ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE,
                        s.uSegment())) {
                    c = WorkerIndexRebuildTest.rebuild(r, truth, 1, stored);
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                long[] after = WorkerIndexRebuildTest.repeat(index(nodes.workers(), s), gen, truth);
                System.out.printf("remote rebuild: %d blocks in %.2f s (%.0f blocks/s) over 3 TLS links; old node held %d, %s;"
                        + " repeat found %d before, %d wiped, %d after%n", stored, seconds, stored / seconds, oldHeld, c, before[0],
                        wiped[0], after[0]);

                assertThat((double) wiped[0]).isLessThan(before[0] * 0.95);
                assertThat((double) after[0]).isGreaterThanOrEqualTo(before[0] * 0.99);
                assertThat(new long[] {before[1], wiped[1], after[1]}).as("PBNs found that do not hold the content").containsOnly(0L);
                assertThat((double) c.taught()).isBetween(oldHeld * 0.97, oldHeld * 1.05);
                assertThat(fresh.load().storedEntries()).isEqualTo(c.taught());
            }
        }
    }

    /** An index over the links up; not closed (closing it would close the links' proxies, which the nodes own). */
    private static ClusterFingerprintIndex index(List<RemoteDedupWorker> workers, SungemSettings s) {
        return new ClusterFingerprintIndex(workers, ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE, s.uSegment(),
                Math.max(1, s.uContainer() / 2));
    }
}
