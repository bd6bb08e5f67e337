package org.holdfast.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EdgeWorkloadTest {
    @TempDir
    Path tmp;

    @Test
    void advance_day1_shiftsTheContentBehindTheInsertPoint() throws IOException {
        try (EdgeWorkload w = new EdgeWorkload(tmp, 1, 1L << 20)) {
            w.advance(0);
            byte[] before = Files.readAllBytes(w.image("shifted"));
            byte[] zero = Files.readAllBytes(w.image("zero"));
            w.advance(1);
            byte[] after = Files.readAllBytes(w.image("shifted"));

            int at = 4096 + 123;
            int n = EdgeWorkload.SHIFT_BYTES;
            assertThat(after).hasSize(before.length);
            assertThat(Arrays.equals(after, 0, at, before, 0, at)).isTrue();
            assertThat(Arrays.equals(after, at + n, after.length, before, at, before.length - n)).isTrue();
            assertThat(Arrays.equals(after, at, at + n, before, at, at + n)).isFalse();
            assertThat(zero).containsOnly((byte) 0);
        }
    }

    @Test
    void advance_day1_rewritesAboutOneAndAHalfPercentOfTheRandomVolume() throws IOException {
        try (EdgeWorkload w = new EdgeWorkload(tmp, 2, 4L << 20)) {
            ImageDigest d = new ImageDigest();
            w.advance(0);
            ImageDigest.State s0 = d.digest(w.image("random"));
            w.advance(1);
            ImageDigest.State s1 = d.digest(w.image("random"));

            assertThat(s0.zeroBlocks()).isZero();
            assertThat(s1.changedBlocks()).isBetween(1L, s1.blocks() * 2 / 100);
        }
    }
}
