package org.holdfast.server.engine;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The figures of docs/benchmarks.md "Master/worker dedup (issue 18)": for 1, 2, 4 and 8 in-process
 * workers in nearest mode (and 4 in hash mode), on the generated stream of
 * {@link EngineComparisonTest} at {@code cluster.scale} (default 4) times its size, with a container
 * cache of {@code cluster.cacheContainers} (default 4) containers per node so that container I/O
 * counts: stored blocks and containers loaded against standalone Sungem, per-worker lookups,
 * containers loaded and busy time per GiB (4 KiB blocks), and the master's own time (its busy time
 * less the workers', which run inside its calls here). Prints markdown tables. Runs with -Pslow:
 *
 * <p>The throughput model (docs/benchmarks.md states its assumptions): per GiB, standalone takes
 * {@code C + L * tIo}, its busy time plus its container loads at {@code tIo} each; a cluster takes
 * the slowest of its workers (each {@code C_w + L_w * tIo}) and its master (own time plus the bytes
 * of its requests and answers on one {@code cluster.linkGbit} link, default 10). A lookup entry is
 * 32 bytes, an answer entry 12 (PBN and run length), a record entry 41 (fingerprint, PBN, new
 * flag); a two-phase broadcast's probe 8 per sampled entry plus 16, its answer 4. Nearest mode
 * runs with both broadcasts, {@link ClusterBroadcast#FULL} and {@link ClusterBroadcast#TWO_PHASE}. Speedup = standalone time / cluster time, given at {@code tIo} = {@code cluster.ioMillis}
 * (default 10 ms: a random 1 MiB read from a 7200-rpm disk) and at 0 (everything cached, CPU-bound).
 *
 * <pre>mvn -B -o -pl server -am test -Pslow -Dtest=ClusterScalingTable -Dsurefire.failIfNoSpecifiedTests=false</pre>
 */
@Tag("slow")
class ClusterScalingTable {
    private static final double GIB_BLOCKS = (1L << 30) / 4096.0;
    private static final int LOOKUP_ENTRY_BYTES = 32;
    private static final int ANSWER_ENTRY_BYTES = 12;
    private static final int RECORD_ENTRY_BYTES = 41;
    /** A probe: the first word of each sampled fingerprint (8 bytes) plus key, count and sample count (16 bytes); its answer 4 bytes. */
    private static final int PROBE_ENTRY_BYTES = 8;
    private static final int PROBE_FIXED_BYTES = 16;
    private static final int PROBE_ANSWER_BYTES = 4;
    private static final double IO_MS = Double.parseDouble(System.getProperty("cluster.ioMillis", "10"));
    private static final double LINK_BYTES_PER_MS = Double.parseDouble(System.getProperty("cluster.linkGbit", "10")) * 1e9 / 8 / 1e3;

    @Test
    void scaling_nearestAndHash_printedAsTables() throws Exception {
        Path base = Files.createTempDirectory("hf-cluster");
        int scale = Integer.getInteger("cluster.scale", 4);
        int cacheContainers = Integer.getInteger("cluster.cacheContainers", 4);
        BackupStreamGenerator gen = new BackupStreamGenerator(BackupStreamGenerator.Params.small().scaled(scale));
        EngineReplay.Result exact = EngineComparisonTest.replayExact(base, gen);
        long exactMemory = exact.stored() * EngineComparisonTest.EXACT_ENTRY_BYTES;
        SungemSettings s = EngineComparisonTest.settingsFor(exactMemory, 32, false, SungemSettings.defaults().stableLevels())
                .withContainerCacheBytes(cacheContainers * (1L << 20));
        // a first pass warms the JIT up so that the busy times below compare like with like
        ClusterComparisonTest.replayStandalone(base.resolve("warm-up"), gen, s);
        ClusterComparisonTest.replayCluster(base.resolve("warm-up-cluster"), gen, s, 2, ClusterMode.NEAREST);
        // and the two-phase paths (the probe), which the first two-phase row with one worker never takes
        ClusterComparisonTest.replayCluster(base.resolve("warm-up-two-phase"), gen, s, 2, ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE);
        ClusterComparisonTest.Run standalone = ClusterComparisonTest.replayStandalone(base.resolve("standalone"), gen, s);
        double gib = standalone.result().fingerprints() / GIB_BLOCKS;
        double sBusy = standalone.busyNanos() / 1e6;
        System.out.printf("stream: %d fingerprints (%.2f GiB of 4 KiB blocks), exact stores %d; S_SFI %d bytes, container cache %d MiB per node%n",
                standalone.result().fingerprints(), gib, exact.stored(), s.sfiBytes(), s.containerCacheBytes() >> 20);
        System.out.printf("| engine | stored blocks | vs standalone | containers loaded / GiB | vs standalone | per-worker lookups / GiB | per-worker loads / GiB (max) | per-worker busy ms / GiB (min-max) | master own ms / GiB | master link MiB / GiB | master link ms / GiB | model speedup, t_io %.0f ms | model speedup, t_io 0 |%n", IO_MS);
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        System.out.printf("| standalone | %d | 1 | %.1f | 1 | %.0f | %.1f | %.0f | - | - | - | 1 | 1 |%n", standalone.result().stored(),
                standalone.containersLoaded() / gib, standalone.result().fingerprints() / gib, standalone.containersLoaded() / gib,
                sBusy / gib);
        int run = 0;
        for (int n : new int[] {1, 2, 4, 8}) {
            row("nearest x" + n + ", full broadcast", ClusterComparisonTest.replayCluster(base.resolve("c" + run++), gen, s, n,
                    ClusterMode.NEAREST, ClusterBroadcast.FULL), standalone, gib);
            row("nearest x" + n + ", two-phase", ClusterComparisonTest.replayCluster(base.resolve("c" + run++), gen, s, n,
                    ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE), standalone, gib);
        }
        SungemSettings quarter = s.withSfiBytes(s.sfiBytes() / 4).withContainerCacheBytes(s.containerCacheBytes() / 4);
        row("nearest x4, one node's memory split, two-phase", ClusterComparisonTest.replayCluster(base.resolve("c" + run++), gen,
                quarter, 4, ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE), standalone, gib);
        row("hash x4", ClusterComparisonTest.replayCluster(base.resolve("c" + run++), gen, s, 4, ClusterMode.HASH), standalone, gib);
        EngineThroughputBenchmark.delete(base);
    }

    private static void row(String name, ClusterComparisonTest.Run r, ClusterComparisonTest.Run standalone, double gib) {
        long lookups = 0;
        long maxLoads = 0;
        long maxBusy = 0;
        long minBusy = Long.MAX_VALUE;
        long workerBusy = 0;
        for (DedupLoad w : r.workers()) {
            lookups += w.lookups();
            maxLoads = Math.max(maxLoads, w.containersLoaded());
            maxBusy = Math.max(maxBusy, w.busyNanos());
            minBusy = Math.min(minBusy, w.busyNanos());
            workerBusy += w.busyNanos();
        }
        long masterBusy = r.busyNanos();
        double masterOwn = (masterBusy - workerBusy) / 1e6 / gib;
        long[] sent = r.sent();
        double out = (sent[0] * LOOKUP_ENTRY_BYTES + sent[1] * (double) RECORD_ENTRY_BYTES + sent[2] * PROBE_ENTRY_BYTES
                + sent[3] * PROBE_FIXED_BYTES) / gib;
        double in = (sent[0] * (double) ANSWER_ENTRY_BYTES + sent[3] * PROBE_ANSWER_BYTES) / gib;
        double link = Math.max(out, in) / LINK_BYTES_PER_MS;
        double standaloneBusy = standalone.busyNanos() / 1e6 / gib;
        double standaloneLoads = standalone.containersLoaded() / gib;
        double[] speedup = new double[2];
        double[] io = {IO_MS, 0};
        for (int k = 0; k < 2; k++) {
            double slowest = masterOwn + link;
            for (DedupLoad w : r.workers()) {
                slowest = Math.max(slowest, (w.busyNanos() / 1e6 + w.containersLoaded() * io[k]) / gib);
            }
            speedup[k] = (standaloneBusy + standaloneLoads * io[k]) / slowest;
        }
        System.out.printf("| %s | %d | %.4f | %.1f | %.3f | %.0f | %.1f | %.0f-%.0f | %.0f | %.1f | %.0f | %.2f | %.2f |%n", name,
                r.result().stored(),
                (double) r.result().stored() / standalone.result().stored(), r.containersLoaded() / gib,
                (double) r.containersLoaded() / Math.max(1, standalone.containersLoaded()),
                lookups / (double) r.workers().size() / gib, maxLoads / gib, minBusy / 1e6 / gib, maxBusy / 1e6 / gib,
                masterOwn, (out + in) / (1 << 20), link, speedup[0], speedup[1]);
    }
}
