package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.gc.gma.GmaFormat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measures (prints; asserts only the chunk counts) the first sweep after an orderly restart of a
 * GMA of {@link #CHUNKS} chunks, one of them changed before the shutdown: with the skip table on
 * disk and without it (the behaviour before it was persisted). Run with -Pslow.
 */
@Tag("slow")
class SweepRestartBenchmark {
    private static final int CHUNKS = 1000; // 8.2 M blocks, 256 MiB of GMA with both frames
    private static final long T0 = 1_800_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void measure_firstSweepAfterRestart_withAndWithoutSkipTable() throws Exception {
        MutableClock clock = new MutableClock(T0);
        BoscSettings s = BoscSettings.defaults();
        try (BoscPipeline p = BoscPipeline.open(dir, s)) {
            UpdateBatch b = new UpdateBatch(4 * CHUNKS);
            for (long c = 0; c < CHUNKS; c++) {
                for (int k = 1; k <= 64; k++) {
                    b.add(UpdateKinds.RC_ADD, c * GmaFormat.PBNS_PER_CHUNK + k * 100, 1);
                }
                b.add(UpdateKinds.RAISE_EXPIRY, c * GmaFormat.PBNS_PER_CHUNK + 7, T0 + 86_400_000L);
            }
            p.appendGroup(1, b);
            Sweeper sw = sweeper(p, clock);
            assertThat(sw.sweep(clock.millis()).chunksScanned()).isEqualTo(CHUNKS);
            p.appendSingle(UpdateKinds.RC_ADD, 5 * GmaFormat.PBNS_PER_CHUNK + 100, -1);
            sw.saveSkipTable();
        }
        long[] with = firstSweep(clock, s);
        Files.delete(dir.resolve(SweepSkipTable.FILE));
        long[] without = firstSweep(clock, s);
        System.out.printf("[bench] first sweep after restart, %d GMA chunks: with skip table %d chunks read in %d ms (table load %d ms),"
                + " without %d chunks read in %d ms%n", CHUNKS, with[0], with[1], with[2], without[0], without[1]);
        assertThat(with[0]).isEqualTo(1);
        assertThat(without[0]).isEqualTo(CHUNKS);
    }

    private static Sweeper sweeper(BoscPipeline p, MutableClock clock) {
        return new Sweeper(p, new GraceGuard(p, clock, Duration.ofHours(6), Duration.ofMinutes(5)), (pbns, n) -> { }, 64);
    }

    /** Reopens, sweeps once; returns chunks read, sweep ms, sweeper construction (table load) ms. The page cache is warm. */
    private long[] firstSweep(MutableClock clock, BoscSettings s) {
        try (BoscPipeline p = BoscPipeline.open(dir, s)) {
            long t0 = System.nanoTime();
            Sweeper sw = sweeper(p, clock);
            long t1 = System.nanoTime();
            SweepReport r = sw.sweep(clock.millis());
            long t2 = System.nanoTime();
            sw.saveSkipTable();
            return new long[] {r.chunksScanned(), (t2 - t1) / 1_000_000, (t1 - t0) / 1_000_000};
        }
    }
}
