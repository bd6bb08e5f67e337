package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The shared contract for the master/worker engine in hash mode (thesis 7.2.5, 4 in-process workers). */
class HashClusterFingerprintIndexTest extends FingerprintIndexContractTest {

    @Override
    protected FingerprintIndex openIndex(Path dir) {
        return ClusterFingerprintIndex.inProcess(dir, 4, ClusterMode.HASH, SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC());
    }

    @Test
    void record_segment_splitByHashOverEveryWorker() {
        int n = 4000;
        byte[] f = fps(41, n);
        long[] pbns = new long[n];
        boolean[] isNew = new boolean[n];
        for (int i = 0; i < n; i++) {
            pbns[i] = i + 1;
            isNew[i] = true;
        }
        try (DedupStream s = index().openStream("v")) {
            s.lookup(f, n, new long[n]);
            s.record(f, n, pbns, isNew);
        }
        long[] stored = ((ClusterFingerprintIndex) index()).workerLoads().stream().mapToLong(DedupLoad::storedEntries).toArray();
        assertThat(Arrays.stream(stored).sum()).isEqualTo(n);
        for (long s : stored) {
            assertThat(s).as("each worker's share of a uniform hash").isBetween(800L, 1200L);
        }
        long[] found = new long[n];
        try (DedupStream s = index().openStream("w")) {
            s.lookup(f, n, found);
        }
        for (int i = 0; i < n; i++) {
            assertThat(found[i]).isIn(0L, pbns[i]);
        }
        // sampling may miss the odd short tail of a share, no more
        assertThat(Arrays.stream(found).filter(p -> p > 0).count()).isGreaterThan(n * 95L / 100);
    }

    @Test
    void forgetAll_hashMode_marksStaleOnlyOnTheWorkerOfEachFingerprint() {
        int n = 400;
        byte[] f = fps(42, n);
        long[] pbns = SungemFingerprintIndexTest.seq(1, n);
        try (DedupStream s = index().openStream("v")) {
            s.lookup(f, n, new long[n]);
            s.record(f, n, pbns, SungemFingerprintIndexTest.trues(n));
        }
        index().forgetAll(pbns, f, n);
        ClusterFingerprintIndex cluster = (ClusterFingerprintIndex) index();
        long marks = 0;
        for (DedupWorker w : cluster.workers()) {
            marks += ((LocalDedupWorker) w).engine().sungemStats().staleMarks();
        }
        assertThat(marks).as("one stale mark per forgotten PBN, not one per worker").isEqualTo(n);
        long[] found = new long[n];
        try (DedupStream s = index().openStream("w")) {
            s.lookup(f, n, found);
        }
        assertThat(found).containsOnly(0L);
    }
}
