package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Random;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShadowedFingerprintIndexTest {
    @TempDir
    Path dir;

    @Test
    void lookup_sungemWithExactShadow_answersFromSungemAndCountsEfficiency() {
        byte[] f = new byte[512 * 32];
        new Random(41).nextBytes(f);
        long[] pbns = new long[512];
        boolean[] isNew = new boolean[512];
        for (int i = 0; i < 512; i++) {
            pbns[i] = 1 + i;
            isNew[i] = true;
        }
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
                ShadowedFingerprintIndex idx = new ShadowedFingerprintIndex(
                        new SungemFingerprintIndex(dir, SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC()),
                        new ExactFingerprintIndex(db))) {
            try (DedupStream s = idx.openStream("a")) {
                long[] found = new long[512];
                s.lookup(f, 512, found);
                assertThat(found).containsOnly(0L);
                s.record(f, 512, pbns, isNew);
            }
            long[] found = new long[512];
            try (DedupStream s = idx.openStream("b")) {
                s.lookup(f, 512, found);
            }
            assertThat(found).containsExactly(pbns);
            assertThat(idx.shadowDuplicates()).isEqualTo(512);
            assertThat(idx.primaryDuplicates()).isEqualTo(512);
            assertThat(idx.efficiency()).isEqualTo(1.0);
            idx.forget(1, f, 0);
            try (DedupStream s = idx.openStream("c")) {
                s.lookup(f, 512, found);
            }
            assertThat(found[0]).isZero();
        }
    }
}
