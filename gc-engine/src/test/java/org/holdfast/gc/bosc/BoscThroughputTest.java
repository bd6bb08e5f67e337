package org.holdfast.gc.bosc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.gma.GcMetadataArray;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.gc.gma.GmaFormat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measures (prints, asserts nothing about speed) GMA update throughput: BOSC with 1, 2 and 4
 * committers against a "vanilla" read-modify-write of the chunk per update, on random PBNs over a
 * range much larger than the chunk cache (thesis Table 6.2 in spirit). Run with -Pslow.
 */
@Tag("slow")
class BoscThroughputTest {
    private static final long PBN_RANGE = 4_000_000; // 489 chunks, 128 MB of GMA with both frames
    private static final int UPDATES = 1_000_000;

    @TempDir
    Path dir;

    @Test
    void measure_boscVersusVanilla() {
        long vanilla = vanilla(dir.resolve("vanilla"), UPDATES / 20);
        System.out.printf("[bench] vanilla read-modify-write: %,d updates/s (%d updates)%n", vanilla, UPDATES / 20);
        for (int committers : new int[] {1, 2, 4}) {
            long rate = bosc(dir.resolve("bosc" + committers), committers);
            System.out.printf("[bench] BOSC, %d committer(s): %,d updates/s (%d updates, logged, applied, fsynced)%n",
                    committers, rate, UPDATES);
            assertThat(rate).isPositive();
        }
    }

    private static long bosc(Path d, int committers) {
        BoscSettings s = BoscSettings.defaults().withCommitters(committers).withCommitIdle(Duration.ofMillis(5));
        Random r = new Random(1);
        long start = System.nanoTime();
        try (BoscPipeline p = BoscPipeline.open(d, s)) {
            UpdateBatch b = new UpdateBatch(1000);
            for (int i = 0; i < UPDATES; i++) {
                b.add(UpdateKinds.RC_ADD, 1 + (long) (r.nextDouble() * PBN_RANGE), 1);
                if (b.size() == 1000) {
                    p.appendGroup(i / 1000 + 1, b);
                    b = new UpdateBatch(1000);
                }
            }
            p.commitAll();
        }
        return UPDATES * 1_000_000_000L / (System.nanoTime() - start);
    }

    private static long vanilla(Path d, int n) {
        Random r = new Random(1);
        long start = System.nanoTime();
        try (GcMetadataArray gma = GcMetadataArray.open(d, 64)) {
            for (int i = 0; i < n; i++) {
                long pbn = 1 + (long) (r.nextDouble() * PBN_RANGE);
                long c = GmaFormat.chunkOf(pbn);
                ReentrantLock l = gma.lock(c);
                l.lock();
                try {
                    GmaChunk chunk = gma.load(c);
                    chunk.apply(i + 1, UpdateKinds.RC_ADD, pbn, 1);
                    gma.write(chunk);
                } finally {
                    l.unlock();
                }
                if (i % 100 == 0) {
                    gma.sync();
                }
            }
            gma.sync();
        }
        return n * 1_000_000_000L / (System.nanoTime() - start);
    }
}
