package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import java.util.function.BiFunction;
import org.holdfast.server.engine.ClusterFingerprintIndex;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.SungemFingerprintIndex;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The engine-time meter under real ingest (RocksDB, loopback agent), for every engine, as Prometheus exports it. */
class DedupEngineMetricsTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private static BiFunction<MetadataDb, Path, FingerprintIndex> engine(String name) {
        return switch (name) {
            case "exact" -> (db, d) -> new ExactFingerprintIndex(db);
            // default shape, small memory: the test needs the code path, not the capacity
            case "sungem" -> (db, d) -> new SungemFingerprintIndex(d.resolve("sungem"), SungemSettings.defaults()
                    .withContainerCacheBytes(8L << 20).withSfiBytes(1L << 20).withBloom(Duration.ofDays(1), 3, 100_000, 0.01),
                    Clock.systemUTC());
            case "cluster" -> (db, d) -> ClusterFingerprintIndex.inProcess(d.resolve("cluster"), 3, ClusterMode.NEAREST,
                    SungemSettings.defaults().withContainerCacheBytes(8L << 20).withSfiBytes(1L << 20)
                            .withBloom(Duration.ofDays(1), 3, 100_000, 0.01), Clock.systemUTC());
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** One sample of {@code name} from the scrape, as the bench reads it. */
    static double sample(PrometheusMeterRegistry r, String name) {
        for (String line : r.scrape().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError(name + " is not in the scrape");
    }

    @ParameterizedTest
    @ValueSource(strings = {"exact", "sungem", "cluster"})
    void engineSeconds_realBackups_advanceAndGiveAFinitePositiveRate(String engine) {
        byte[] day0 = new byte[400 * BS];
        new Random(7).nextBytes(day0);
        byte[] day1 = day0.clone();
        for (int i = 0; i < 40; i++) {
            day1[(i * 9) * BS + 5] ^= 0x33; // changed blocks
        }
        System.arraycopy(day0, 100 * BS, day1, 300 * BS, 50 * BS); // moved blocks: duplicates of stored ones

        try (IngestHarness h = IngestHarness.withIndex(dir, engine(engine))) {
            PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            new DedupEngineMetrics(h.index()).bindTo(r);
            assertThat(sample(r, "holdfast_dedup_engine_seconds_total")).isZero();

            try (AgentDriver a = h.agent()) {
                a.hello();
                a.backup("vol", day0, BS, true);
                double afterDay0 = sample(r, "holdfast_dedup_engine_seconds_total");
                assertThat(afterDay0).as("a full backup spends engine time").isPositive();

                a.backup("vol", day1, BS, true);
                assertThat(sample(r, "holdfast_dedup_engine_seconds_total")).as("an incremental adds to it")
                        .isGreaterThan(afterDay0);
            }
            double fingerprints = sample(r, "holdfast_dedup_fingerprints_total");
            double seconds = sample(r, "holdfast_dedup_engine_seconds_total");
            assertThat(fingerprints).as("every changed block was looked up").isGreaterThanOrEqualTo(400 + 40);
            double rate = fingerprints / seconds;
            assertThat(Double.isFinite(rate)).as("fingerprints/s %s is finite", rate).isTrue();
            assertThat(rate).isPositive();
            if (engine.equals("cluster")) {
                double perWorker = 0;
                int workers = 0;
                for (String line : r.scrape().split("\n")) {
                    if (line.startsWith("holdfast_dedup_cluster_worker_lookups_total{")) {
                        perWorker += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                        workers++;
                    }
                }
                assertThat(workers).isEqualTo(3);
                // two-phase broadcast (the default): a segment goes whole only to workers with a candidate,
                // so fewer lookups than a full broadcast's 3 per fingerprint, and some (the moved blocks')
                assertThat(perWorker).as("nearest mode, two-phase: workers' lookups").isPositive().isLessThan(3 * fingerprints);
                assertThat(sample(r, "holdfast_dedup_duplicates_total")).as("moved blocks found on some worker").isPositive();
            }
        }
    }
}
