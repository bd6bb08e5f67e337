package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {
    @Test
    void parse_labelledSamples_sumsPerName() {
        Map<String, Double> m = PrometheusText.parse("""
                # HELP holdfast_engine_fingerprints_total fingerprints
                # TYPE holdfast_engine_fingerprints_total counter
                holdfast_engine_fingerprints_total{engine="sungem",verdict="duplicate"} 30.0
                holdfast_engine_fingerprints_total{engine="sungem",verdict="new"} 12.0
                jvm_threads_live_threads 17 1700000000000
                odd_value{a="b c"} NaN
                """);

        assertThat(m).containsEntry("holdfast_engine_fingerprints_total", 42.0).containsEntry("jvm_threads_live_threads", 17.0);
        assertThat(PrometheusText.find(m, "fingerprint", "_total")).isEqualTo("holdfast_engine_fingerprints_total");
    }
}
