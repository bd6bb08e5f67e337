package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchRunOrderTest {

    @Test
    void rotated_eachRound_anotherTargetGoesFirst() {
        List<String> t = List.of("tls-on", "tls-off", "restic");
        assertThat(BenchRun.rotated(t, 0)).containsExactly("tls-on", "tls-off", "restic");
        assertThat(BenchRun.rotated(t, 1)).containsExactly("tls-off", "restic", "tls-on");
        assertThat(BenchRun.rotated(t, 5)).containsExactly("restic", "tls-on", "tls-off");
        assertThat(BenchRun.rotated(List.of(), 3)).isEmpty();
    }

    @Test
    void flush_generatedImages_syncedAndAMissingOneIsAnError(@TempDir Path dir) throws IOException {
        Path image = Files.write(dir.resolve("a.img"), new byte[1 << 20]);

        assertThat(BenchRun.flush(List.of(image))).isGreaterThanOrEqualTo(0.0);
        assertThat(Files.size(image)).isEqualTo(1 << 20);
        assertThatThrownBy(() -> BenchRun.flush(List.of(dir.resolve("missing.img")))).isInstanceOf(IOException.class)
                .hasMessageContaining("sync");
    }

    @Test
    void restoreDays_everyTargetRestoresTheFirstAndTheNewestSnapshot() {
        assertThat(BenchRun.restoreDays(true, BenchRun.RestorePlan.SAMPLE, 6)).containsExactly(0, 3, 5);
        assertThat(BenchRun.restoreDays(true, BenchRun.RestorePlan.ALL, 3)).containsExactly(0, 1, 2);
        assertThat(BenchRun.restoreDays(false, BenchRun.RestorePlan.ALL, 3)).containsExactly(0, 2);
        assertThat(BenchRun.restoreDays(false, BenchRun.RestorePlan.SAMPLE, 1)).containsExactly(0);
    }
}
