package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class BenchRunOrderTest {

    @Test
    void rotated_eachRound_anotherTargetGoesFirst() {
        List<String> t = List.of("tls-on", "tls-off", "restic");
        assertThat(BenchRun.rotated(t, 0)).containsExactly("tls-on", "tls-off", "restic");
        assertThat(BenchRun.rotated(t, 1)).containsExactly("tls-off", "restic", "tls-on");
        assertThat(BenchRun.rotated(t, 5)).containsExactly("restic", "tls-on", "tls-off");
        assertThat(BenchRun.rotated(List.of(), 3)).isEmpty();
    }
}
