package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class EngineRateTest {

    @Test
    void of_counterAndTimer_engineRateIsFingerprintsOverEngineSecondsBesideTheEndToEndRate() {
        Map<String, Double> before = Map.of("holdfast_dedup_fingerprints_total", 1000.0, EngineRate.TIMER, 0.5);
        Map<String, Double> after = Map.of("holdfast_dedup_fingerprints_total", 9000.0, EngineRate.TIMER, 2.5);

        Map<String, Object> f = EngineRate.of(before, after, 16.0);

        assertThat(f.get("engineFingerprintsPerSecond")).isEqualTo(8000.0 / 2.0);
        assertThat(f.get("endToEndFingerprintsPerSecond")).isEqualTo(8000.0 / 16.0);
        assertThat(f.get("engineFingerprints")).isEqualTo(8000.0);
        assertThat(f.get("engineSeconds")).isEqualTo(2.0);
    }

    @Test
    void of_serverWithoutTimer_engineRateNotAvailableEndToEndStillGiven() {
        Map<String, Double> after = Map.of("holdfast_index_lookups", 600.0);

        Map<String, Object> f = EngineRate.of(Map.of(), after, 3.0);

        assertThat(f.get("engineFingerprintsPerSecond")).isEqualTo(EngineRate.NO_TIMER);
        assertThat(f.get("endToEndFingerprintsPerSecond")).isEqualTo(200.0);
        assertThat(f.get("engineFingerprintsMetric")).isEqualTo("holdfast_index_lookups");
    }

    @Test
    void of_noFingerprintCounter_bothRatesNotAvailable() {
        Map<String, Object> f = EngineRate.of(Map.of(), Map.of("holdfast_store_next_pbn", 5.0), 3.0);

        assertThat(f.get("engineFingerprintsPerSecond")).isEqualTo(EngineRate.NO_COUNTER);
        assertThat(f.get("endToEndFingerprintsPerSecond")).isEqualTo(EngineRate.NO_COUNTER);
    }

    @Test
    void of_noLookupsDuringTheBackups_noRateInsteadOfZeroOrInfinity() {
        Map<String, Double> same = Map.of("holdfast_dedup_fingerprints_total", 10.0, EngineRate.TIMER, 0.1);

        Map<String, Object> f = EngineRate.of(same, same, 3.0);

        assertThat(f.get("engineFingerprintsPerSecond")).isEqualTo(EngineRate.NO_WORK);
        assertThat(f.get("endToEndFingerprintsPerSecond")).isEqualTo(EngineRate.NO_WORK);
    }
}
