package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shared contract for the master/worker engine in nearest mode (4 in-process workers) with a full
 * broadcast, plus its routing; {@link TwoPhaseClusterFingerprintIndexTest} runs the same with the
 * two-phase broadcast.
 */
class ClusterFingerprintIndexTest extends FingerprintIndexContractTest {

    @Override
    protected FingerprintIndex openIndex(Path dir) {
        return ClusterFingerprintIndex.inProcess(dir, 4, ClusterMode.NEAREST, broadcast(), SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC());
    }

    /** How the index under test broadcasts lookups. */
    protected ClusterBroadcast broadcast() {
        return ClusterBroadcast.FULL;
    }

    ClusterFingerprintIndex cluster() {
        return (ClusterFingerprintIndex) index();
    }

    /** Looks up {@code f} on a new stream and records it, new entries getting PBNs from {@code next}; returns the lookup. */
    long[] backup(String volume, byte[] f, int n, long next) {
        long[] found = new long[n];
        long[] pbns = new long[n];
        boolean[] isNew = new boolean[n];
        try (DedupStream s = index().openStream(volume)) {
            s.lookup(f, n, found);
            for (int i = 0; i < n; i++) {
                isNew[i] = found[i] == 0;
                pbns[i] = isNew[i] ? next++ : found[i];
            }
            s.record(f, n, pbns, isNew);
        }
        return found;
    }

    long[] storedPerWorker() {
        return cluster().workerLoads().stream().mapToLong(DedupLoad::storedEntries).toArray();
    }

    @Test
    void record_newSegment_storedOnOneWorkerOnly() {
        backup("v", fps(31, 1000), 1000, 1);
        long[] stored = storedPerWorker();
        assertThat(Arrays.stream(stored).sum()).isEqualTo(1000);
        assertThat(Arrays.stream(stored).filter(x -> x > 0).count()).as("workers holding the segment").isEqualTo(1);
    }

    @Test
    void record_missesBesideAHit_goToTheWorkerThatResolvedTheHit() {
        byte[] f = fps(32, 1000);
        backup("v", f, 1000, 1);
        int holder = owner(storedPerWorker());
        // the first input segment (U_segment 256) with its second half replaced: the new half is routed to the holder
        byte[] g = f.clone();
        System.arraycopy(fps(33, 128), 0, g, 128 * 32, 128 * 32);
        long[] found = backup("w", g, 1000, 5000);
        assertThat(Arrays.stream(found, 0, 128).filter(p -> p > 0).count()).isGreaterThan(100);
        long[] stored = storedPerWorker();
        long misses = Arrays.stream(found).filter(p -> p == 0).count();
        assertThat(misses).isGreaterThanOrEqualTo(128);
        assertThat(stored[holder]).isEqualTo(1000 + misses);
        assertThat(Arrays.stream(stored).sum()).as("nothing stored elsewhere").isEqualTo(stored[holder]);
        assertThat(cluster().routingCounts()[1]).as("misses routed to the nearest").isPositive();
    }

    @Test
    void record_manyNewSegments_spreadOverTheLeastLoadedWorkers() {
        long next = 1;
        for (int k = 0; k < 16; k++) {
            backup("v" + k, fps(100 + k, 1024), 1024, next);
            next += 1024;
        }
        long[] stored = storedPerWorker();
        assertThat(Arrays.stream(stored).sum()).isEqualTo(16 * 1024);
        // home budget is half a container (512 of the test's 1024): every worker gets a share
        assertThat(Arrays.stream(stored).min().getAsLong()).isGreaterThanOrEqualTo(2 * 1024);
    }

    @Test
    void lookup_afterRestart_findsEverySegmentOnItsWorker() {
        long next = 1;
        for (int k = 0; k < 8; k++) {
            backup("v" + k, fps(200 + k, 2000), 2000, next);
            next += 2000;
        }
        restart();
        next = 1;
        for (int k = 0; k < 8; k++) {
            long[] found = new long[2000];
            try (DedupStream s = index().openStream("again")) {
                s.lookup(fps(200 + k, 2000), 2000, found);
            }
            assertThat(found).containsExactly(SungemFingerprintIndexTest.seq(next, 2000));
            next += 2000;
        }
    }

    @Test
    void record_withoutRecentLookup_looksUpAgainAndLearns() {
        byte[] f = fps(34, 800);
        try (DedupStream s = index().openStream("v")) {
            s.record(f, 800, SungemFingerprintIndexTest.seq(1, 800), SungemFingerprintIndexTest.trues(800));
        }
        long[] found = new long[800];
        try (DedupStream s = index().openStream("w")) {
            s.lookup(f, 800, found);
        }
        assertThat(found).containsExactly(SungemFingerprintIndexTest.seq(1, 800));
    }

    @Test
    void record_afterManyLookups_reusesEveryMergeWithoutBroadcastingAgain() {
        // a batch of scattered changes: many short segments looked up before any is recorded
        int segments = 1000;
        int n = 16;
        lookUpAllThenRecordAll(segments, n);
        long lookups = cluster().workerLoads().stream().mapToLong(DedupLoad::lookups).sum();
        assertThat(lookups).as("one broadcast per lookup, none on record").isEqualTo(4L * segments * n);
        assertThat(cluster().entriesSent()[0]).isEqualTo(4L * segments * n);
    }

    /** {@code segments} new segments of {@code n} entries (seeds 300 on, PBNs 1 on), all looked up, then all recorded, on one stream. */
    void lookUpAllThenRecordAll(int segments, int n) {
        try (DedupStream s = index().openStream("v")) {
            for (int k = 0; k < segments; k++) {
                s.lookup(fps(300 + k, n), n, new long[n]);
            }
            for (int k = 0; k < segments; k++) {
                s.record(fps(300 + k, n), n, SungemFingerprintIndexTest.seq(1 + k * n, n), SungemFingerprintIndexTest.trues(n));
            }
        }
    }

    @Test
    void constructor_workersOutOfOrder_refused() {
        Path d = dir.resolve("odd");
        try (LocalDedupWorker w = new LocalDedupWorker(1, d, SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC())) {
            assertThatThrownBy(() -> new ClusterFingerprintIndex(List.of(w), ClusterMode.NEAREST, 256, 128))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("worker 0 calls itself 1");
        }
    }

    @Test
    void parse_unknownMode_namesTheSetting() {
        assertThat(ClusterMode.parse("Hash", "x")).isEqualTo(ClusterMode.HASH);
        assertThatThrownBy(() -> ClusterMode.parse("ring", "holdfast.dedup.cluster.mode"))
                .hasMessageContaining("holdfast.dedup.cluster.mode must be 'nearest' or 'hash', not 'ring'");
    }

    static int owner(long[] stored) {
        for (int w = 0; w < stored.length; w++) {
            if (stored[w] > 0) {
                return w;
            }
        }
        throw new AssertionError("no worker stored anything");
    }
}
