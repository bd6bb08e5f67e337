package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster worker's stream keeps the last 32 lookups for their records; an empty probe notes one
 * too. When the master asks for the lookup anyway (the worker resolved part of a recent one), the
 * lookup takes over the probe's note instead of a second place, so a batch of lookups recorded
 * later is not pushed out of the ring and looked up again.
 */
class WorkerProbeRingTest {
    @TempDir
    Path dir;

    @Test
    void record_afterEmptyProbesThenLookups_reusesEveryLookup() {
        int segments = 20;
        int n = 16;
        byte[][] segs = new byte[segments][];
        try (SungemFingerprintIndex idx = new SungemFingerprintIndex(dir, SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC())) {
            try (DedupStream first = idx.openStream("a")) {
                for (int k = 0; k < segments; k++) {
                    segs[k] = new byte[n * 32];
                    new Random(k).nextBytes(segs[k]);
                    boolean[] isNew = new boolean[n];
                    Arrays.fill(isNew, true);
                    first.record(segs[k], n, SungemFingerprintIndexTest.seq(1 + k * n, n), isNew);
                }
            }
            SungemDedupStream s = (SungemDedupStream) idx.openStream("b");
            long[][] found = new long[segments][n];
            for (int k = 0; k < segments; k++) {
                assertThat(s.probe(new long[0], 0, SungemDedupStream.keyOf(segs[k], n), n)).as("probe %d", k).isZero();
                s.lookup(segs[k], n, found[k]);
            }
            assertThat(found[segments - 1]).containsExactly(SungemFingerprintIndexTest.seq(1 + (segments - 1) * n, n));
            long touched = idx.sungemStats().containersTouched();
            for (int k = 0; k < segments; k++) {
                s.record(segs[k], n, found[k], new boolean[n]);
            }
            assertThat(idx.sungemStats().containersTouched() - touched).as("containers a record looked in again").isZero();
            s.close();
        }
    }
}
