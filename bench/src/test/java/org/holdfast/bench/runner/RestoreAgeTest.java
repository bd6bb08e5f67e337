package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.bench.runner.TargetResults.target;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RestoreAgeTest {
    @Test
    void of_holdfastRestoringThreeDaysOfTwoVolumes_newestAgainstFirstWithTheSpeedFactorOfEach() {
        BenchResults.TargetResult t = target("holdfast-sungem-tls-off-daemon", 0, 1, 1);
        t.restores.clear();
        for (String v : new String[] {"a", "b"}) {
            t.restores.add(new BenchResults.RestoreRow(v, 0, 100_000_000, 0.5, -1, 1, true, "x", "x", 10));
            t.restores.add(new BenchResults.RestoreRow(v, 2, 100_000_000, 1.0, -1, 1, true, "x", "x", 10));
            t.restores.add(new BenchResults.RestoreRow(v, 5, 100_000_000, 2.0, -1, 1, true, "x", "x", 40));
        }

        Map<String, Object> a = RestoreAge.of(t);

        assertThat(a).containsEntry("firstDay", 0).containsEntry("newestDay", 5).containsEntry("firstMBps", 200.0)
                .containsEntry("newestMBps", 50.0).containsEntry("newestOverFirst", 0.25)
                .containsEntry("firstSpeedFactor", 10.0).containsEntry("newestSpeedFactor", 2.5);
        assertThat((java.util.List<?>) a.get("byDay")).hasSize(3);
        assertThat(RestoreAge.newestMBps(t)).isEqualTo(50.0);
    }

    @Test
    void of_peer_speedsWithoutSpeedFactor() {
        Map<String, Object> a = RestoreAge.of(target("restic", -1, 4.0, 1));

        assertThat(a).containsEntry("firstMBps", 25.0).containsEntry("newestOverFirst", 1.0)
                .containsEntry("newestSpeedFactor", RestoreAge.PEER_SPEED_FACTOR);
    }

    @Test
    void of_oneDayRestoredOrARegionCountMissing_notAvailable() {
        BenchResults.TargetResult one = target("borg", -1, 2.0, 1);
        one.restores.remove(0);
        BenchResults.TargetResult unknown = target("holdfast-exact", 0, 1.0, 1);
        unknown.restores.add(new BenchResults.RestoreRow("w", 1, 100_000_000, 1.0, -1, 1, true, "x", "x", 7));

        assertThat(RestoreAge.of(one)).containsOnlyKeys("status");
        assertThat(RestoreAge.of(unknown).get("newestSpeedFactor")).asString().startsWith("n/a");
    }
}
