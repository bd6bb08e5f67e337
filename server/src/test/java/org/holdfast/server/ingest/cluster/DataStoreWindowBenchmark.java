package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.protocol.Committed;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.store.BlockHome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Wall time of a first backup with the blocks on two workers (data on workers, TLS worker links on
 * loopback, RocksDB and data logs on disk): 64 MiB of half-compressible 4 KiB blocks sent as 256 KiB
 * zstd frames (the agent's default), so one DATA_STORE per frame; one store in flight per session
 * (the behaviour before the window) and {@link WorkerBlockHome#MAX_STORES_IN_FLIGHT}, alternating on
 * the same nodes. Prints one line per run; the
 * figures are in docs/benchmarks.md ("DATA_STORE window"). Slow: {@code -Pslow} or name it.
 */
@Tag("slow")
class DataStoreWindowBenchmark {
    private static final int BS = 4096;
    private static final int BLOCKS = 16_384; // 64 MiB
    private static final int FRAME_BLOCKS = 64; // 256 KiB frames

    @TempDir
    Path dir;

    @Test
    void backupFrames_twoDataWorkers_printsWallTimeOneStoreAndTheWindowInFlight() {
        SungemSettings settings = SungemFingerprintIndexTest.smallSettings();
        int[] windows = {1, WorkerBlockHome.MAX_STORES_IN_FLIGHT};
        int[] next = {0};
        Stats stats = new Stats();
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (TlsWorkerNodes nodes = new TlsWorkerNodes(dir.resolve("cluster"), 2, settings, Clock.systemUTC(), true);
             IngestHarness master = IngestHarness.withBlocks(dir.resolve("master"),
                     (db, d) -> new RemoteFingerprintIndex(nodes.server().dedupLinks(), nodes.registry(), ClusterMode.NEAREST, settings),
                     // each session's home: the window of the run about to start
                     () -> new DelegatingBlockHome(new WorkerBlockHome(nodes.server().rangeStores())) {
                         @Override
                         public BlockHome forSession() {
                             return new Watched(new WorkerBlockHome(nodes.server().rangeStores(), null, null, windows[next[0]]), stats);
                         }
                     })) {
            // run 0 warms the JIT and opens the workers' stores; then the two windows alternate, back to back
            for (int run = 0; run < 7; run++) {
                next[0] = run == 0 ? 1 : (run - 1) % 2;
                byte[] img = image(run);
                stats.reset();
                long cpu0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                Committed c;
                try (AgentDriver agent = new AgentDriver(master.port())) {
                    agent.hello();
                    c = agent.backupFrames("v" + run, img, BS, FRAME_BLOCKS);
                }
                long ms = (System.nanoTime() - t0) / 1_000_000;
                double cpuS = (os.getProcessCpuTime() - cpu0) / 1e9;
                assertThat(c.newBlocks()).isEqualTo(BLOCKS);
                System.out.printf("[store-window] run %d%s, window %d: %d MiB in %d ms, %.1f MiB/s; process CPU %.2f s (%.2f cores);"
                                + " %d DATA_STOREs, mean send-to-answer %.2f ms, peak in flight %d%n", run,
                        run == 0 ? " (warm-up)" : "", windows[next[0]], (long) BLOCKS * BS >> 20, ms,
                        ((double) BLOCKS * BS / (1 << 20)) / (ms / 1000.0), cpuS, cpuS / (ms / 1000.0), stats.stores.get(),
                        stats.stores.get() == 0 ? 0.0 : stats.answerNanos.get() / 1e6 / stats.stores.get(), stats.peak.get());
            }
        }
    }

    /** Stores of the runs' sessions: how many, their send-to-answer time, most at once. */
    private static final class Stats {
        final AtomicInteger stores = new AtomicInteger();
        final AtomicLong answerNanos = new AtomicLong();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger peak = new AtomicInteger();

        void reset() {
            stores.set(0);
            answerNanos.set(0);
            peak.set(0);
        }
    }

    /** A session's home that times each frame store from its send to its answer. */
    private static final class Watched extends DelegatingBlockHome {
        private final Stats stats;

        Watched(BlockHome home, Stats stats) {
            super(home);
            this.stats = stats;
        }

        @Override
        public long appendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize) {
            return startAppendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize).join();
        }

        @Override
        public CompletableFuture<Long> startAppendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength,
                                                        int blockSize) {
            long t0 = System.nanoTime();
            stats.peak.accumulateAndGet(stats.inFlight.incrementAndGet(), Math::max);
            return home().startAppendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize).whenComplete((p, e) -> {
                stats.inFlight.decrementAndGet();
                stats.stores.incrementAndGet();
                stats.answerNanos.addAndGet(System.nanoTime() - t0);
            });
        }
    }

    /** Each block: 2 KiB of random bytes, then 2 KiB of zeros (compresses about 2:1, and every block differs). */
    private static byte[] image(long seed) {
        byte[] img = new byte[BLOCKS * BS];
        Random r = new Random(seed);
        byte[] half = new byte[BS / 2];
        for (int b = 0; b < BLOCKS; b++) {
            r.nextBytes(half);
            System.arraycopy(half, 0, img, b * BS, half.length);
        }
        return img;
    }
}
