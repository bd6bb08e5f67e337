package org.holdfast.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceWorkloadTest {
    @TempDir
    Path tmp;

    private List<String> run(Path dir, long seed) throws IOException {
        List<String> shas = new ArrayList<>();
        try (TraceWorkload w = new TraceWorkload(dir, seed, 2, 8L << 20, 3)) {
            for (int d = 0; d < w.days(); d++) {
                w.advance(d);
                for (String v : w.volumes()) {
                    shas.add(ImageDigest.sha256(w.image(v)));
                }
            }
        }
        return shas;
    }

    @Test
    void advance_sameSeed_sameImagesEveryDay() throws IOException {
        List<String> a = run(tmp.resolve("a"), 7);
        List<String> b = run(tmp.resolve("b"), 7);
        List<String> c = run(tmp.resolve("c"), 8);

        assertThat(a).isEqualTo(b);
        assertThat(a).doesNotContainAnyElementsOf(c);
        assertThat(new HashSet<>(a)).hasSize(a.size());
    }

    @Test
    void advance_laterDays_changeAboutOneAndAHalfPercentPerDay() throws IOException {
        double sum = 0;
        int n = 0;
        try (TraceWorkload w = new TraceWorkload(tmp, 3, 2, 128L << 20, 6)) {
            List<ImageDigest> digests = List.of(new ImageDigest(), new ImageDigest());
            for (int d = 0; d < w.days(); d++) {
                w.advance(d);
                for (int h = 0; h < 2; h++) {
                    ImageDigest.State s = digests.get(h).digest(w.image(w.volumes().get(h)));
                    if (d > 0) {
                        double fraction = (double) s.changedBlocks() / s.blocks();
                        assertThat(fraction).as("host %d day %d", h, d).isBetween(0.002, 0.08);
                        sum += fraction;
                        n++;
                    } else {
                        assertThat(s.zeroBlocks()).as("about 30 %% free space").isBetween(s.blocks() / 5, s.blocks() / 2);
                    }
                }
            }
        }
        assertThat(sum / n).as("mean daily change").isBetween(0.008, 0.03);
    }

    @Test
    void advance_day0_hostsShareTheOsImageAtTheSameAddresses() throws IOException {
        try (TraceWorkload w = new TraceWorkload(tmp, 5, 2, 32L << 20, 1)) {
            w.advance(0);
            byte[] a = Files.readAllBytes(w.image("host-01"));
            byte[] b = Files.readAllBytes(w.image("host-02"));
            int same = 0;
            int nonZero = 0;
            Set<Integer> distinct = new HashSet<>();
            for (int off = 0; off < a.length; off += BlockContent.BLOCK) {
                boolean zero = true;
                for (int i = off; i < off + BlockContent.BLOCK && zero; i++) {
                    zero = a[i] == 0;
                }
                if (zero) {
                    continue;
                }
                nonZero++;
                if (java.util.Arrays.equals(a, off, off + BlockContent.BLOCK, b, off, off + BlockContent.BLOCK)) {
                    same++;
                }
                distinct.add(java.util.Arrays.hashCode(java.util.Arrays.copyOfRange(a, off, off + BlockContent.BLOCK)));
            }
            // The shared system files are about a third of the used space.
            assertThat((double) same / nonZero).isBetween(0.2, 0.6);
            assertThat(distinct.size()).isGreaterThan(nonZero * 9 / 10);
        }
    }
}
