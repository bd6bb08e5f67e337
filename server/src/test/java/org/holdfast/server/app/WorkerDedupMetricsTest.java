package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Random;
import org.holdfast.server.engine.LazyDedupWorker;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SegmentLookup;
import org.holdfast.server.engine.SegmentRecord;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A worker's engine meters as Prometheus exports them: zero without opening the engine, then its real figures. */
class WorkerDedupMetricsTest {
    private static final int N = 64;

    @TempDir
    Path dir;

    /** A worker's engine in {@code dir}, opened on its first call as in a worker process. */
    private LazyDedupWorker worker() {
        Path index = dir.resolve("dedup-worker");
        return new LazyDedupWorker(0, index, () -> new LocalDedupWorker(0, index, SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC()));
    }

    private static PrometheusMeterRegistry scraped(LazyDedupWorker worker) {
        PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new WorkerDedupMetrics(worker).bindTo(r);
        return r;
    }

    private record Stored(byte[] fps, long[] pbns) {
    }

    /** Looks up and records {@code N} new random fingerprints (seeded) at PBNs from {@code firstPbn} on. */
    private static Stored store(LazyDedupWorker worker, long seed, long firstPbn) {
        byte[] fps = new byte[N * 32];
        new Random(seed).nextBytes(fps);
        long[] pbns = new long[N];
        boolean[] isNew = new boolean[N];
        for (int i = 0; i < N; i++) {
            pbns[i] = firstPbn + i;
            isNew[i] = true;
        }
        worker.lookup(new SegmentLookup(1, fps, N)).join();
        worker.record(new SegmentRecord(1, fps, N, pbns, isNew, N)).join();
        return new Stored(fps, pbns);
    }

    @Test
    void scrapeBeforeTheFirstCall_isZeroAndOpensNothing_afterCalls_countsTheWorkersLookupsAndStores() {
        try (LazyDedupWorker worker = worker()) {
            PrometheusMeterRegistry r = scraped(worker);
            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_lookups_total")).isZero();
            assertThat(worker.isOpen()).as("a scrape must not open the engine").isFalse();

            byte[] fps = store(worker, 3, 1000).fps();
            worker.lookup(new SegmentLookup(1, fps, N)).join();

            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_lookups_total")).isEqualTo(2 * N);
            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_stored")).isEqualTo(N);
            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_seconds_total")).isPositive();
            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_containers_loaded_total")).isNotNegative();
        }
    }

    @Test
    void forget_pbnsTheMastersGcFreed_countedAsForgotten() {
        try (LazyDedupWorker worker = worker()) {
            PrometheusMeterRegistry r = scraped(worker);
            Stored s = store(worker, 4, 2000);
            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_forgotten_total")).isZero();

            worker.forget(s.pbns(), s.fps(), N / 2);

            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_forgotten_total")).isEqualTo(N / 2);
        }
    }

    @Test
    void forgetIfHeld_fingerprintsNeverRecorded_countedAsSkipped() {
        try (LazyDedupWorker worker = worker()) {
            PrometheusMeterRegistry r = scraped(worker);
            Stored s = store(worker, 5, 3000);
            byte[] unknown = new byte[s.fps().length];
            new Random(6).nextBytes(unknown);

            assertThat(worker.forgetIfHeld(s.pbns(), unknown, N)).isEqualTo(N);
            worker.forgetIfHeld(s.pbns(), s.fps(), N / 2); // held: marked, not skipped

            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_forgotten_total")).isEqualTo(N + N / 2);
            assertThat(DedupEngineMetricsTest.sample(r, "holdfast_dedup_worker_forgets_skipped_total")).isEqualTo(N);
        }
    }
}
