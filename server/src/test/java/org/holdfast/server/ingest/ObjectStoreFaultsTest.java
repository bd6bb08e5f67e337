package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.holdfast.server.app.ObjectStoreMetrics;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.holdfast.server.store.object.SlowDownProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backend s3 through a proxy that injects the store's failures into a share of the requests: 503
 * Slow Down, connections reset without an answer, answers cut off part-way (a PUT stored but unheard,
 * whose retry meets 412 and is taken by its size), and delays. Backups upload every sealed log
 * exactly once; with the local copies wiped, restores fetch them back through the same faults, byte-identical;
 * every failure is retried and counted in the metrics, none reads as corrupt data.
 */
class ObjectStoreFaultsTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    @Test
    void faultyStore_backupsAndRestoresFinishByteIdentical_retriesCounted() throws Exception {
        byte[] first = FrameIngestLoopbackTest.image(11, 1024);
        byte[] second = first.clone();
        System.arraycopy(FrameIngestLoopbackTest.image(12, 256), 0, second, 500 * BS, 256 * BS);
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3")); SlowDownProxy proxy = new SlowDownProxy(s3.port())) {
            URI via = URI.create("http://127.0.0.1:" + proxy.port());
            // 10 attempts: a request that meets a fault in 30 % of attempts fails for good once in 170,000
            Supplier<LogArchive> archives = () -> new LogArchive(S3ObjectStore.open(s3.settings(via, "hf/")
                    .withRetries(10, Duration.ofMillis(5))), "node-f");
            proxy.faults(new SlowDownProxy.Faults(0.1, 0.1, 0.1, 0.1, Duration.ofMillis(300), 17));
            try (IngestHarness h = IngestHarness.withArchive(dir.resolve("server"), 128 << 10, archives)) {
                try (AgentDriver a = h.agent()) {
                    a.hello();
                    assertThat(a.backupFrames("vol", first, BS, 16).newBlocks()).isEqualTo(1024);
                    assertThat(a.backupFrames("vol", second, BS, 16).newBlocks()).isEqualTo(256);
                }
                LogArchive archive = h.store().archive();
                archive.awaitUploads(120_000);
                Path data = h.store().dir();
                int durable = h.store().compactableBelow();
                List<Integer> sealed = ObjectStoreBackupRestoreTest.logIds(data).stream().filter(id -> id < durable).toList();
                assertThat(sealed).hasSizeGreaterThanOrEqualTo(4);
                assertThat(sealed).allMatch(archive::isUploaded);
                assertThat(archive.stats().uploadFailures()).as("every upload finished within its retries").isZero();
                try (S3ObjectStore direct = S3ObjectStore.connect(s3.settings("hf/"))) {
                    List<String> objects = direct.list("node-f/logs/");
                    assertThat(objects).as("one object per sealed log, none twice").hasSize(sealed.size());
                    for (int id : sealed) {
                        String prefix = String.format("node-f/logs/%08x-", id);
                        String key = objects.stream().filter(k -> k.startsWith(prefix)).findFirst().orElseThrow();
                        assertThat(direct.size(key)).as(key).hasValue(Files.size(data.resolve(DataLog.fileName(id))));
                    }
                }
                long backupRetries = archive.stats().requests().retries();

                h.restartWithoutLogs(sealed);
                try (AgentDriver a = h.agent()) {
                    a.hello();
                    assertThat(a.restore("vol", 1).image()).as("snapshot 1 through the faults").isEqualTo(first);
                    assertThat(a.restore("vol", 2).image()).as("snapshot 2 through the faults").isEqualTo(second);
                }
                LogArchive.Stats after = h.store().archive().stats();
                assertThat(h.store().archive().cache().stats().rangeGets()).as("the wiped logs read by ranged GETs").isPositive();

                SimpleMeterRegistry registry = new SimpleMeterRegistry();
                new ObjectStoreMetrics(h.store().archive()).bindTo(registry);
                double retries = registry.get("holdfast.objects.retries").functionCounter().count();
                System.out.printf("[faults] %d refused (503), %d reset, %d cut, %d delayed, %d passed; retries %d at backup, %d at restore%n",
                        proxy.refused(), proxy.resets(), proxy.cuts(), proxy.delays(), proxy.passed(), backupRetries,
                        after.requests().retries());
                assertThat(proxy.refused()).isPositive();
                assertThat(proxy.resets()).isPositive();
                assertThat(proxy.cuts()).isPositive();
                assertThat(proxy.delays()).isPositive();
                assertThat(backupRetries).as("the backups' requests were retried").isPositive();
                assertThat(retries).as("the restore's retries, in the metric").isEqualTo(after.requests().retries()).isPositive();
            }
        }
    }
}
