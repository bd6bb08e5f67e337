package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The master/worker engine's contract and routing (everything {@link ClusterFingerprintIndexTest}
 * asks) with the two-phase broadcast, plus what the probe spares: workers without a candidate
 * container get no lookup, yet store the misses routed to them without looking them up again.
 */
class TwoPhaseClusterFingerprintIndexTest extends ClusterFingerprintIndexTest {

    @Override
    protected ClusterBroadcast broadcast() {
        return ClusterBroadcast.TWO_PHASE;
    }

    private long[] lookupsPerWorker() {
        return cluster().workerLoads().stream().mapToLong(DedupLoad::lookups).toArray();
    }

    @Test
    void lookup_storedSegment_onlyTheHoldingWorkerLooksItUp() {
        byte[] f = fps(51, 1000);
        backup("v", f, 1000, 1);
        int holder = owner(storedPerWorker());
        long[] before = lookupsPerWorker();
        long[] found = backup("w", f, 1000, 5000);
        assertThat(found).containsExactly(SungemFingerprintIndexTest.seq(1, 1000));
        long[] after = lookupsPerWorker();
        for (int w = 0; w < after.length; w++) {
            assertThat(after[w] - before[w]).as("lookups of worker %d", w).isEqualTo(w == holder ? 1000 : 0);
        }
        assertThat(cluster().lookupsSpared()).as("the first backup's lookup on every worker (none had a candidate), the second's on the others")
                .isEqualTo(4 + 3);
    }

    @Override
    @Test
    void record_afterManyLookups_reusesEveryMergeWithoutBroadcastingAgain() {
        // new data: no worker has a candidate, so only probes go out, and the home worker stores the
        // misses routed to it from the empty lookup its probe noted, without a lookup of its own
        int segments = 1000;
        int n = 16;
        lookUpAllThenRecordAll(segments, n);
        long[] sent = cluster().entriesSent();
        assertThat(sent[0]).as("entries in lookups").isZero();
        assertThat(sent[3]).as("probes, one per worker per lookup").isEqualTo(4L * segments);
        assertThat(sent[2]).as("sampled entries shown").isLessThan(4L * segments * n);
        assertThat(lookupsPerWorker()).containsOnly(0L);
        for (int k = 0; k < segments; k += 97) {
            long[] found = new long[n];
            try (DedupStream s = index().openStream("w" + k)) {
                s.lookup(fps(300 + k, n), n, found);
            }
            assertThat(found).as("segment %d", k).containsExactly(SungemFingerprintIndexTest.seq(1 + k * n, n));
        }
    }

    @Test
    void probe_samplesBeyondTheCount_refused() {
        assertThatThrownBy(() -> new SegmentProbe(1, 0, 2, new long[3], 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("probe of 3 samples of 2 entries");
    }

    @Test
    void parse_broadcast_namesTheSetting() {
        assertThat(ClusterBroadcast.parse("Two-Phase", "x")).isEqualTo(ClusterBroadcast.TWO_PHASE);
        assertThat(ClusterBroadcast.parse("full", "x")).isEqualTo(ClusterBroadcast.FULL);
        assertThatThrownBy(() -> ClusterBroadcast.parse("multicast", "holdfast.dedup.cluster.broadcast"))
                .hasMessageContaining("holdfast.dedup.cluster.broadcast must be 'two-phase' or 'full', not 'multicast'");
    }

    @Test
    void entriesSent_oneWorker_sendsNoProbe() {
        try (ClusterFingerprintIndex one = ClusterFingerprintIndex.inProcess(dir.resolve("one"), 1, ClusterMode.NEAREST,
                ClusterBroadcast.TWO_PHASE, SungemFingerprintIndexTest.smallSettings(), java.time.Clock.systemUTC())) {
            try (DedupStream s = one.openStream("v")) {
                s.lookup(fps(61, 100), 100, new long[100]);
            }
            assertThat(one.entriesSent()[3]).as("probes").isZero();
            assertThat(one.entriesSent()[0]).as("entries in lookups").isEqualTo(100);
            assertThat(List.of(one.broadcast())).containsExactly(ClusterBroadcast.TWO_PHASE);
        }
    }
}
